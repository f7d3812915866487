/* golden.c: the HDF5 golden store (docs/DESIGN.md "Golden store (HDF5)"; layout in golden.h).
 *
 * Only the HDF5 C API that is the same in 1.10, 1.12 and 1.14 is used (H5Lget_name_by_idx and
 * H5Oopen + H5Iget_type instead of H5Literate / H5Oget_info, whose signatures changed in 1.12).
 * HDF5's automatic error printing is switched off around every call into this file and the
 * innermost message of its error stack is folded into ours, so a corrupt file is one line that
 * names the file and dataset, never a page of HDF5 trace. */
#include "golden.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qc_checked.h"
#include "files.h"
#include "tempfile.h"

#ifndef QC_HAVE_HDF5
#define QC_HAVE_HDF5 0
#endif

/* Error messages: "PATH: WHERE: what is wrong". */
typedef struct reason {
    char text[256];
} reason;

typedef struct gctx {
    const char *path;
    char *err;
    size_t errlen;
    reason *why; /* the innermost message of the last failed HDF5 call */
    int lenient; /* a file from another tool: qcheck's attributes optional (qc_golden_read_outputs) */
    int raw;     /* an ephemeral file: contiguous datasets, no filters, no fsync (qc_golden_meta.ephemeral) */
    int64_t file_bytes; /* reading: the file's size, which bounds what its datasets can hold */
} gctx;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int fail(const gctx *c, const char *fmt, ...)
{
    if (c->err && c->errlen) {
        int k = snprintf(c->err, c->errlen, "%s: ", c->path ? c->path : "(null path)");
        if (k >= 0 && (size_t)k < c->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return QC_GOLDEN_EBADINPUT;
}

#if !QC_HAVE_HDF5

int qc_golden_available(void) { return 0; }

int qc_golden_write(const char *path, const qc_golden_meta *m, const qc_tensor_set *inputs,
                    const qc_tensor_set *outputs, const qc_tensor_set *const *stages,
                    const char *const *stage_names, int nstages, char *err, size_t errlen)
{
    gctx c = {path, err, errlen, NULL, 0, 0, 0};
    (void)m, (void)inputs, (void)outputs, (void)stages, (void)stage_names, (void)nstages;
    return fail(&c, "qcheck was built without HDF5 (install libhdf5-dev and reconfigure)");
}

int qc_golden_read(const char *path, qc_golden_meta *m, qc_tensor_set *inputs,
                   qc_tensor_set *outputs, char *err, size_t errlen)
{
    gctx c = {path, err, errlen, NULL, 0, 0, 0};
    (void)m, (void)inputs, (void)outputs;
    return fail(&c, "qcheck was built without HDF5 (install libhdf5-dev and reconfigure)");
}

int qc_golden_stage_names(const char *path, char names[][QC_NAME_LEN], int max, int *n, char *err,
                          size_t errlen)
{
    gctx c = {path, err, errlen, NULL, 0, 0, 0};
    (void)names, (void)max;
    if (n)
        *n = 0;
    return fail(&c, "qcheck was built without HDF5 (install libhdf5-dev and reconfigure)");
}

int qc_golden_read_stage(const char *path, const char *stage, qc_tensor_set *out, char *err,
                         size_t errlen)
{
    gctx c = {path, err, errlen, NULL, 0, 0, 0};
    (void)stage, (void)out;
    return fail(&c, "qcheck was built without HDF5 (install libhdf5-dev and reconfigure)");
}

int qc_golden_read_outputs(const char *path, qc_tensor_set *out, char *err, size_t errlen)
{
    gctx c = {path, err, errlen, NULL, 1, 0, 0};
    (void)out;
    return fail(&c, "qcheck was built without HDF5 (install libhdf5-dev and reconfigure)");
}

#else /* QC_HAVE_HDF5 */

#include <hdf5.h>

int qc_golden_available(void) { return 1; }

/* What a file of N bytes can hold: deflate expands a stream at most 1032:1 (zlib's technical
 * notes: 258-byte matches coded in 2 bits each), shuffle and fletcher32 add nothing, so a dataset
 * of more than 1032 N bytes is a corrupt header (a 9.5 KB file once asked for 64 GiB). String
 * attributes are qcheck's own short fields (the longest, params, is 2 KB). */
#define QC_GOLDEN_MAX_EXPANSION 1032
#define QC_GOLDEN_MAX_ATTR (1 << 16)

/* ---- HDF5 error handling ------------------------------------------------------------------ */

typedef struct quiet {
    H5E_auto2_t fn;
    void *data;
    reason last;
} quiet;

static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    reason *r = data;
    if (n == 0 && e->desc)
        snprintf(r->text, sizeof r->text, "%s", e->desc);
    return 0;
}

/* HDF5 calls its "automatic" error function when an API call fails, before the next API call
 * clears the stack; this one keeps the innermost message (where the library detected the
 * problem: "data error detected by Fletcher32 checksum", "truncated file: eof = ...") instead
 * of printing the trace. */
static herr_t capture(hid_t stack, void *data)
{
    H5Ewalk2(stack, H5E_WALK_UPWARD, innermost, data);
    return 0;
}

/* Saved and restored, so that a program embedding qcheck keeps its own HDF5 error settings. */
static void quiet_on(quiet *q)
{
    snprintf(q->last.text, sizeof q->last.text, "no HDF5 detail");
    H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
    H5Eset_auto2(H5E_DEFAULT, capture, &q->last);
}

static void quiet_off(const quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->fn, q->data); }

static const char *h5why(const gctx *c) { return c->why ? c->why->text : "no HDF5 detail"; }

static void close_id(hid_t id)
{
    if (id >= 0)
        H5Idec_ref(id);
}

/* ---- storage types ------------------------------------------------------------------------ */

/* Little-endian in the file whatever the host, as every raw file of docs/spec/cli.md. */
static hid_t file_type(qc_storage s)
{
    switch (s) {
    case QC_ST_U8: return H5T_STD_U8LE;
    case QC_ST_U16: return H5T_STD_U16LE;
    case QC_ST_I32: return H5T_STD_I32LE;
    case QC_ST_U32: return H5T_STD_U32LE;
    case QC_ST_F32: return H5T_IEEE_F32LE;
    case QC_ST_F64: return H5T_IEEE_F64LE;
    default: return -1;
    }
}

static hid_t mem_type(qc_storage s)
{
    switch (s) {
    case QC_ST_U8: return H5T_NATIVE_UINT8;
    case QC_ST_U16: return H5T_NATIVE_UINT16;
    case QC_ST_I32: return H5T_NATIVE_INT32;
    case QC_ST_U32: return H5T_NATIVE_UINT32;
    case QC_ST_F32: return H5T_NATIVE_FLOAT;
    case QC_ST_F64: return H5T_NATIVE_DOUBLE;
    default: return -1;
    }
}

/* The storage a dataset's HDF5 type maps to, or -1. Either byte order is accepted (a file written
 * on a big-endian machine converts on read); anything else (int8, int64, compound) is not a
 * qcheck tensor. */
static int storage_of(hid_t t)
{
    H5T_class_t cls = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    if (cls == H5T_INTEGER) {
        int is_signed = H5Tget_sign(t) == H5T_SGN_2;
        if (size == 1 && !is_signed) return QC_ST_U8;
        if (size == 2 && !is_signed) return QC_ST_U16;
        if (size == 4) return is_signed ? QC_ST_I32 : QC_ST_U32;
        return -1;
    }
    if (cls == H5T_FLOAT) {
        if (H5Tequal(t, H5T_IEEE_F32LE) > 0 || H5Tequal(t, H5T_IEEE_F32BE) > 0) return QC_ST_F32;
        if (H5Tequal(t, H5T_IEEE_F64LE) > 0 || H5Tequal(t, H5T_IEEE_F64BE) > 0) return QC_ST_F64;
    }
    return -1;
}

/* Logical dtypes whose storage is fixed (docs/spec/cli.md "cast": 8-, 6- and 4-bit codes take one
 * byte each, bf16/f16 two bytes). Names not listed are accepted with any storage: the store does not
 * own the list of formats, the reference does. */
static const struct {
    const char *dtype;
    qc_storage storage;
} fixed_storage[] = {
    {"f32", QC_ST_F32},     {"f64", QC_ST_F64},      {"i32", QC_ST_I32},    {"u32", QC_ST_U32},
    {"u8", QC_ST_U8},       {"u16", QC_ST_U16},      {"bf16", QC_ST_U16},   {"f16", QC_ST_U16},
    {"e4m3fn", QC_ST_U8},   {"e4m3fnuz", QC_ST_U8},  {"e5m2", QC_ST_U8},    {"e5m2fnuz", QC_ST_U8},
    {"e8m0", QC_ST_U8},     {"e2m1", QC_ST_U8},      {"e2m1x2", QC_ST_U8},  {"e2m3", QC_ST_U8},
    {"e3m2", QC_ST_U8},
};

static int dtype_fits(const char *dtype, qc_storage s)
{
    for (size_t i = 0; i < sizeof fixed_storage / sizeof fixed_storage[0]; i++)
        if (strcmp(fixed_storage[i].dtype, dtype) == 0)
            return fixed_storage[i].storage == s;
    return 1;
}

/* ---- names -------------------------------------------------------------------------------- */

/* A string field is usable when it is NUL-terminated inside its array. */
static int terminated(const char *s, size_t cap) { return s && strnlen(s, cap) < cap; }

/* One HDF5 link name: not empty, no '/', not "." (HDF5 would read it as a path). */
static int link_name_ok(const char *s, size_t cap)
{
    return terminated(s, cap) && s[0] && !strchr(s, '/') && strcmp(s, ".") != 0;
}

/* ---- attributes --------------------------------------------------------------------------- */

/* Fixed-length UTF-8 strings, NUL-terminated: variable-length strings would live in a global
 * heap collection whose unused tail HDF5 does not clear, and the file would not be byte-for-byte
 * deterministic. h5py reads these as numpy.bytes_ (decode() them). */
static herr_t put_str(hid_t obj, const char *name, const char *value)
{
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR), attr = -1;
    herr_t st = -1;
    if (type >= 0 && space >= 0 && H5Tset_size(type, strlen(value) + 1) >= 0 &&
        H5Tset_strpad(type, H5T_STR_NULLTERM) >= 0 && H5Tset_cset(type, H5T_CSET_UTF8) >= 0) {
        attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
        if (attr >= 0)
            st = H5Awrite(attr, type, value);
    }
    close_id(attr), close_id(space), close_id(type);
    return st;
}

static herr_t put_scalar(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *v)
{
    hid_t space = H5Screate(H5S_SCALAR), attr = -1;
    herr_t st = -1;
    if (space >= 0)
        attr = H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    if (attr >= 0)
        st = H5Awrite(attr, mtype, v);
    close_id(attr), close_id(space);
    return st;
}

/* shape: int64[ndim]; a scalar (ndim 0) gets an empty (null-dataspace) attribute. */
static herr_t put_shape(hid_t obj, const qc_tensor *t)
{
    hsize_t n = (hsize_t)t->ndim;
    hid_t space = t->ndim ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_NULL), attr = -1;
    herr_t st = -1;
    if (space >= 0)
        attr = H5Acreate2(obj, "shape", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    if (attr >= 0)
        st = t->ndim ? H5Awrite(attr, H5T_NATIVE_INT64, t->shape) : 0;
    close_id(attr), close_id(space);
    return st;
}

static hid_t open_attr(const gctx *c, hid_t obj, const char *where, const char *name)
{
    if (H5Aexists(obj, name) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        fail(c, "%s: attribute '%s' is missing", where, name);
        return -1;
    }
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) {
        fail(c, "%s: attribute '%s' cannot be opened (%s)", where, name, h5why(c));
    }
    return a;
}

/* Reads a string attribute into out[cap]; fixed-length (as written here) or variable-length (as
 * h5py writes a Python str, e.g. an external runner's outputs file). */
static int read_str_attr(const gctx *c, hid_t a, const char *where, const char *name, char *out,
                         size_t cap)
{
    hid_t ft = H5Aget_type(a), mt = -1;
    int rc = 0;
    if (ft < 0 || H5Tget_class(ft) != H5T_STRING) {
        close_id(ft);
        return fail(c, "%s: attribute '%s' is not a string", where, name);
    }
    mt = H5Tcopy(ft);
    if (H5Tis_variable_str(ft) > 0) {
        char *p = NULL;
        if (mt < 0 || H5Aread(a, mt, &p) < 0 || !p)
            rc = fail(c, "%s: attribute '%s' cannot be read", where, name);
        else if (strlen(p) >= cap)
            rc = fail(c, "%s: attribute '%s' is %zu bytes, at most %zu allowed", where, name,
                      strlen(p), cap - 1);
        else
            memcpy(out, p, strlen(p) + 1);
        if (p)
            H5free_memory(p);
    } else if (H5Tget_size(ft) == 0 || H5Tget_size(ft) > QC_GOLDEN_MAX_ATTR) {
        rc = fail(c, "%s: attribute '%s' claims %zu bytes, at most %d read", where, name, H5Tget_size(ft),
                  QC_GOLDEN_MAX_ATTR);
    } else {
        size_t size = H5Tget_size(ft);
        char *buf = calloc(1, size + 1);
        if (!buf || mt < 0 || H5Aread(a, mt, buf) < 0)
            rc = fail(c, "%s: attribute '%s' cannot be read", where, name);
        else if (strlen(buf) >= cap)
            rc = fail(c, "%s: attribute '%s' is %zu bytes, at most %zu allowed", where, name,
                      strlen(buf), cap - 1);
        else
            memcpy(out, buf, strlen(buf) + 1);
        free(buf);
    }
    H5Eclear2(H5E_DEFAULT);
    close_id(mt), close_id(ft);
    return rc;
}

static int get_str(const gctx *c, hid_t obj, const char *where, const char *name, char *out,
                   size_t cap)
{
    hid_t a = open_attr(c, obj, where, name);
    if (a < 0)
        return QC_GOLDEN_EBADINPUT;
    int rc = read_str_attr(c, a, where, name, out, cap);
    close_id(a);
    return rc;
}

/* A scalar integer attribute, converted by HDF5 to mtype. */
static int get_int(const gctx *c, hid_t obj, const char *where, const char *name, hid_t mtype,
                   void *out)
{
    hid_t a = open_attr(c, obj, where, name);
    if (a < 0)
        return QC_GOLDEN_EBADINPUT;
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
    int rc = 0;
    if (ft < 0 || H5Tget_class(ft) != H5T_INTEGER || sp < 0 ||
        H5Sget_simple_extent_npoints(sp) != 1)
        rc = fail(c, "%s: attribute '%s' is not one integer", where, name);
    else if (H5Aread(a, mtype, out) < 0)
        rc = fail(c, "%s: attribute '%s' cannot be read", where, name);
    H5Eclear2(H5E_DEFAULT);
    close_id(sp), close_id(ft), close_id(a);
    return rc;
}

/* The shape attribute: int64[ndim] with ndim <= QC_MAX_DIMS, or a null dataspace for ndim 0. */
static int get_shape(const gctx *c, hid_t ds, const char *where, int *ndim, int64_t *shape)
{
    hid_t a = open_attr(c, ds, where, "shape");
    if (a < 0)
        return QC_GOLDEN_EBADINPUT;
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
    int rc = 0;
    H5S_class_t cls = sp >= 0 ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
    hssize_t n = cls == H5S_SIMPLE ? H5Sget_simple_extent_npoints(sp) : 0;
    if (ft < 0 || H5Tget_class(ft) != H5T_INTEGER || (cls != H5S_SIMPLE && cls != H5S_NULL) ||
        (cls == H5S_SIMPLE && H5Sget_simple_extent_ndims(sp) != 1))
        rc = fail(c, "%s: attribute 'shape' is not a 1-d integer array", where);
    else if (n < 0 || n > QC_MAX_DIMS)
        rc = fail(c, "%s: attribute 'shape' has %lld dimensions, at most %d supported", where,
                  (long long)n, QC_MAX_DIMS);
    else if (n > 0 && H5Aread(a, H5T_NATIVE_INT64, shape) < 0)
        rc = fail(c, "%s: attribute 'shape' cannot be read", where);
    *ndim = (int)n;
    H5Eclear2(H5E_DEFAULT);
    close_id(sp), close_id(ft), close_id(a);
    return rc;
}

/* ---- writing ------------------------------------------------------------------------------ */

static int check_tensor(const gctx *c, const char *where, const qc_tensor *t)
{
    if (!link_name_ok(t->name, sizeof t->name))
        return fail(c, "%s: tensor name '%.*s' is not a valid dataset name (empty, '/' or '.')",
                    where, (int)sizeof t->name, t->name);
    if ((unsigned)t->storage >= QC_ST_COUNT)
        return fail(c, "%s/%s: storage %d is not a qc_storage", where, t->name, (int)t->storage);
    if (!terminated(t->dtype, sizeof t->dtype) || !t->dtype[0] ||
        !terminated(t->layout, sizeof t->layout) || !t->layout[0])
        return fail(c, "%s/%s: dtype and layout must be non-empty strings", where, t->name);
    if (!dtype_fits(t->dtype, t->storage))
        return fail(c, "%s/%s: dtype %s cannot be stored as %s", where, t->name, t->dtype,
                    qc_storage_name(t->storage));
    if (t->ndim < 0 || t->ndim > QC_MAX_DIMS)
        return fail(c, "%s/%s: ndim %d is outside 0..%d", where, t->name, t->ndim, QC_MAX_DIMS);
    uint64_t numel = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0)
            return fail(c, "%s/%s: shape[%d] = %lld is negative", where, t->name, i,
                        (long long)t->shape[i]);
        if (t->shape[i] && numel > UINT64_MAX / (uint64_t)t->shape[i])
            return fail(c, "%s/%s: shape overflows", where, t->name);
        numel *= (uint64_t)t->shape[i];
    }
    if (numel > SIZE_MAX / qc_storage_size(t->storage) ||
        numel * qc_storage_size(t->storage) != t->nbytes)
        return fail(c, "%s/%s: nbytes %zu does not match the shape (%llu elements of %zu bytes)",
                    where, t->name, t->nbytes, (unsigned long long)numel,
                    qc_storage_size(t->storage));
    if (t->nbytes && !t->data)
        return fail(c, "%s/%s: data is NULL", where, t->name);
    return 0;
}

/* h5py's guidance is chunks of 10 KiB to 1 MiB; 1 MiB compresses well and keeps the fletcher32
 * check (one per chunk) local. The innermost dimensions stay whole while they fit. */
#define QC_CHUNK_BYTES ((hsize_t)1 << 20)

static void chunk_dims(const hsize_t *dims, int ndim, size_t esize, hsize_t *chunk)
{
    hsize_t bytes = esize;
    int i = ndim - 1;
    for (; i >= 0 && bytes * dims[i] <= QC_CHUNK_BYTES; i--) {
        chunk[i] = dims[i];
        bytes *= dims[i];
    }
    if (i >= 0) {
        hsize_t k = QC_CHUNK_BYTES / bytes;
        chunk[i] = k ? k : 1;
        while (--i >= 0)
            chunk[i] = 1;
    }
}

/* Chunked + shuffle + deflate + fletcher32 (the checksum last, so it covers the compressed bytes
 * on disk) when the tensor has elements; contiguous otherwise, as HDF5 can chunk neither an
 * empty nor a scalar dataspace. No timestamps: the file depends only on its content. */
static hid_t make_dcpl(const qc_tensor *t, const hsize_t *dims, int raw)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 ||
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0)
        goto bad;
    if (t->ndim > 0 && t->nbytes > 0 && !raw) {
        hsize_t chunk[QC_MAX_DIMS];
        size_t esize = qc_storage_size(t->storage);
        chunk_dims(dims, t->ndim, esize, chunk);
        if (H5Pset_chunk(dcpl, t->ndim, chunk) < 0 || (esize > 1 && H5Pset_shuffle(dcpl) < 0) ||
            H5Pset_deflate(dcpl, 6) < 0 || H5Pset_fletcher32(dcpl) < 0)
            goto bad;
    }
    return dcpl;
bad:
    close_id(dcpl);
    return -1;
}

static int write_tensor(const gctx *c, hid_t grp, const char *where, const qc_tensor *t)
{
    int rc = check_tensor(c, where, t);
    if (rc)
        return rc;
    hsize_t dims[QC_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        dims[i] = (hsize_t)t->shape[i];
    hid_t space = t->ndim ? H5Screate_simple(t->ndim, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t dcpl = make_dcpl(t, dims, c->raw), ds = -1;
    if (space >= 0 && dcpl >= 0)
        ds = H5Dcreate2(grp, t->name, file_type(t->storage), space, H5P_DEFAULT, dcpl,
                        H5P_DEFAULT);
    if (ds < 0 ||
        (t->nbytes && H5Dwrite(ds, mem_type(t->storage), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                               t->data) < 0) ||
        put_str(ds, "qc_dtype", t->dtype) < 0 || put_shape(ds, t) < 0 ||
        put_str(ds, "layout", t->layout) < 0) {
        rc = fail(c, "%s/%s: cannot write the dataset (%s)", where, t->name, h5why(c));
    }
    close_id(ds), close_id(dcpl), close_id(space);
    return rc;
}

/* Groups track link creation order so that a set reads back in the order it was written (the
 * order of an op's operands), not alphabetically. */
static hid_t make_group(const gctx *c, hid_t parent, const char *name, const char *where)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE), g = -1;
    if (gcpl >= 0 && H5Pset_obj_track_times(gcpl, 0) >= 0 &&
        H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) >= 0)
        g = H5Gcreate2(parent, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    if (g < 0) {
        fail(c, "%s: cannot create the group (%s)", where, h5why(c));
    }
    close_id(gcpl);
    return g;
}

static int write_set(const gctx *c, hid_t parent, const char *name, const char *where,
                     const qc_tensor_set *set)
{
    hid_t g = make_group(c, parent, name, where);
    if (g < 0)
        return QC_GOLDEN_EBADINPUT;
    int rc = 0;
    if (set && (set->n < 0 || set->n > QC_MAX_TENSORS))
        rc = fail(c, "%s: tensor count %d is outside 0..%d", where, set->n, QC_MAX_TENSORS);
    for (int i = 0; set && !rc && i < set->n; i++)
        rc = write_tensor(c, g, where, &set->t[i]);
    close_id(g);
    return rc;
}

static int write_stages(const gctx *c, hid_t f, const qc_tensor_set *const *stages,
                        const char *const *names, int n)
{
    hid_t g = make_group(c, f, "stages", "/stages");
    if (g < 0)
        return QC_GOLDEN_EBADINPUT;
    int rc = 0;
    for (int i = 0; !rc && i < n; i++) {
        char where[QC_NAME_LEN + 16];
        snprintf(where, sizeof where, "/stages/%s", names[i]);
        rc = write_set(c, g, names[i], where, stages[i]);
    }
    close_id(g);
    return rc;
}

static int write_meta(const gctx *c, hid_t f, const qc_golden_meta *m)
{
    const int version = QC_GOLDEN_FORMAT_VERSION;
    if (put_str(f, "qcheck_version", m->qcheck_version) < 0 ||
        put_scalar(f, "format_version", H5T_STD_I32LE, H5T_NATIVE_INT, &version) < 0 ||
        put_str(f, "case", m->case_name) < 0 || put_str(f, "op", m->op) < 0 ||
        put_str(f, "params", m->params_json) < 0 ||
        put_scalar(f, "seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, &m->seed) < 0 ||
        put_str(f, "profile", m->profile) < 0 || put_str(f, "backend", m->backend) < 0 ||
        put_str(f, "git_revision", m->git_revision) < 0 || put_str(f, "created", m->created) < 0) {
        return fail(c, "/: cannot write the root attributes (%s)", h5why(c));
    }
    return 0;
}

#define META_STRINGS(X)                                                                         \
    X(qcheck_version) X(case_name) X(op) X(params_json) X(profile) X(backend) X(git_revision)   \
    X(created)

static int check_args(const gctx *c, const qc_golden_meta *m, const qc_tensor_set *const *stages,
                      const char *const *names, int n)
{
    if (!c->path || !c->path[0])
        return fail(c, "no output path given");
    if (!m)
        return fail(c, "no metadata given");
#define CHECK_FIELD(f)                                                                          \
    if (!terminated(m->f, sizeof m->f))                                                         \
        return fail(c, "metadata field " #f " is not NUL-terminated");
    META_STRINGS(CHECK_FIELD)
#undef CHECK_FIELD
    if (n < 0 || n > QC_GOLDEN_MAX_STAGES || (n && (!stages || !names)))
        return fail(c, "stage count %d is outside 0..%d or the stage arrays are NULL", n,
                    QC_GOLDEN_MAX_STAGES);
    for (int i = 0; i < n; i++)
        if (!stages[i] || !names[i] || !link_name_ok(names[i], QC_NAME_LEN))
            return fail(c, "stage %d: missing, or its name is empty, has '/' or is longer than %d",
                        i, QC_NAME_LEN - 1);
    return 0;
}

/* The file is built in memory (HDF5's core driver, no backing store) and written with plain
 * write(2): HDF5 never sees an I/O error. On a full disk libhdf5 1.10.8 fails H5Fclose and leaves
 * the file's objects half closed, and its exit handler then crashed the process (golden generate
 * on a full tmpfs ended in SIGSEGV after its ENOSPC message); here a failed write is only a failed
 * write(2) of ours, and the file image is the same bytes the sec2 driver writes. */
static hid_t create_image(const gctx *c)
{
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1;
    if (fcpl < 0 || fapl < 0 || H5Pset_obj_track_times(fcpl, 0) < 0 ||
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 || H5Pset_fapl_core(fapl, (size_t)1 << 20, 0) < 0)
        fail(c, "cannot set up HDF5 property lists (%s)", h5why(c));
    else if ((f = H5Fcreate(c->path, H5F_ACC_TRUNC, fcpl, fapl)) < 0)
        fail(c, "cannot create the file in memory (%s)", h5why(c));
    close_id(fapl), close_id(fcpl);
    return f;
}

/* Goldens and exec batches end in ".h5": their stale temporaries are this module's to sweep. */
static const char *const h5_suffixes[] = {".h5", NULL};

/* The folder of path, swept of stale temporaries once per process (core/tempfile.h): a generate
 * writes thousands of files into a few folders. */
static void sweep_once(const char *path)
{
    static char done[16][512];
    static int ndone;
    char dir[512];
    const char *slash = strrchr(path, '/');
    int n = slash ? (int)(slash - path) : 1;
    if (n >= (int)sizeof dir)
        return;
    snprintf(dir, sizeof dir, "%.*s", n, slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    for (int i = 0; i < ndone; i++)
        if (!strcmp(done[i], dir))
            return;
    qc_temp_sweep(dir, h5_suffixes);
    snprintf(done[ndone++ % 16], sizeof done[0], "%s", dir);
    ndone = ndone > 16 ? 16 : ndone;
}

/* The image reaches the disk (fsync) before the rename makes it the golden, so a crash leaves
 * either the old file or the complete new one (qc_publish; POSIX rename(2) is atomic within a
 * folder). An ephemeral file (an exec batch) skips the fsync. */
static int publish(const gctx *c, const uint8_t *image, size_t size)
{
    const char *step;
    sweep_once(c->path);
    int err = qc_publish(c->path, NULL, image, size, !c->raw, &step);
    return err ? fail(c, "cannot %s (%s)", step, strerror(err)) : 0;
}

/* Closes the in-memory file after taking its image; writes the image when everything before
 * succeeded. */
static int finish_image(const gctx *c, hid_t f, int rc)
{
    uint8_t *image = NULL;
    ssize_t size = -1;
    if (!rc && H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0)
        size = H5Fget_file_image(f, NULL, 0);
    if (!rc && size > 0 && (image = malloc((size_t)size)) != NULL &&
        H5Fget_file_image(f, image, (size_t)size) != size)
        size = -1;
    if (!rc && (size <= 0 || !image))
        rc = fail(c, "cannot take the file image (%s)", size > 0 ? "out of memory" : h5why(c));
    if (H5Fclose(f) < 0 && !rc)
        rc = fail(c, "closing the in-memory file failed (%s)", h5why(c));
    if (!rc)
        rc = publish(c, image, (size_t)size);
    free(image);
    return rc;
}

int qc_golden_write(const char *path, const qc_golden_meta *m, const qc_tensor_set *inputs,
                    const qc_tensor_set *outputs, const qc_tensor_set *const *stages,
                    const char *const *stage_names, int nstages, char *err, size_t errlen)
{
    quiet q;
    gctx c = {path, err, errlen, &q.last, 0, m && m->ephemeral, 0};
    quiet_on(&q);
    int rc = check_args(&c, m, stages, stage_names, nstages);
    hid_t f = rc ? -1 : create_image(&c);
    if (!rc && f < 0)
        rc = QC_GOLDEN_EBADINPUT;
    if (!rc)
        rc = write_meta(&c, f, m);
    if (!rc)
        rc = write_set(&c, f, "inputs", "/inputs", inputs);
    if (!rc)
        rc = write_set(&c, f, "outputs", "/outputs", outputs);
    if (!rc)
        rc = write_stages(&c, f, stages, stage_names, nstages);
    if (f >= 0)
        rc = finish_image(&c, f, rc);
    H5Eclear2(H5E_DEFAULT);
    quiet_off(&q);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------------ */

static int check_version(const gctx *c, hid_t f)
{
    int v = 0;
    int rc = get_int(c, f, "/", "format_version", H5T_NATIVE_INT, &v);
    if (!rc && v != QC_GOLDEN_FORMAT_VERSION)
        rc = fail(c, "/: format_version %d is not supported (this qcheck reads %d)", v,
                  QC_GOLDEN_FORMAT_VERSION);
    return rc;
}

static int open_file(gctx *c, hid_t *f)
{
    *f = -1;
    if (!c->path || !c->path[0])
        return fail(c, "no input path given");
    struct stat st;
    if (stat(c->path, &st) != 0)
        return fail(c, "cannot open (%s)", strerror(errno));
    if (!S_ISREG(st.st_mode)) /* before any open: a FIFO would block it, a device feed HDF5 without end */
        return fail(c, "not a regular file");
    FILE *probe = fopen(c->path, "rb");
    if (!probe)
        return fail(c, "cannot open (%s)", strerror(errno));
    fclose(probe);
    c->file_bytes = (int64_t)st.st_size;
    htri_t is = H5Fis_hdf5(c->path);
    if (is == 0)
        return fail(c, "not an HDF5 file (no HDF5 signature; truncated before it, or another format)");
    if (is < 0)
        return fail(c, "cannot be read as HDF5 (%s)", h5why(c));
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0)
        *f = H5Fopen(c->path, H5F_ACC_RDONLY, fapl);
    close_id(fapl);
    if (*f < 0)
        return fail(c, "HDF5 file is corrupt or truncated (%s)", h5why(c));
    int rc = c->lenient && H5Aexists(*f, "format_version") <= 0 ? 0 : check_version(c, *f);
    if (rc) {
        H5Fclose(*f);
        *f = -1;
    }
    return rc;
}

#define META_STRING_ATTRS(X)                                                                    \
    X("qcheck_version", qcheck_version) X("case", case_name) X("op", op)                        \
    X("params", params_json) X("profile", profile) X("backend", backend)                       \
    X("git_revision", git_revision) X("created", created)

static int read_meta(const gctx *c, hid_t f, qc_golden_meta *m)
{
    int rc = 0;
    memset(m, 0, sizeof *m);
    m->format_version = QC_GOLDEN_FORMAT_VERSION; /* open_file checked it */
#define GET(attr, field)                                                                        \
    if (!rc)                                                                                    \
        rc = get_str(c, f, "/", attr, m->field, sizeof m->field);
    META_STRING_ATTRS(GET)
#undef GET
    if (!rc)
        rc = get_int(c, f, "/", "seed", H5T_NATIVE_UINT64, &m->seed);
    return rc;
}

/* The dataspace must be exactly the shape attribute: same rank, same extents (hence the same
 * element count), so a file edited by hand cannot pass off one shape as another. */
static int check_extent(const gctx *c, hid_t ds, const char *where, int ndim, const int64_t *shape)
{
    hid_t sp = H5Dget_space(ds);
    H5S_class_t cls = sp >= 0 ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
    int rank = cls == H5S_SIMPLE ? H5Sget_simple_extent_ndims(sp) : 0;
    hsize_t dims[QC_MAX_DIMS] = {0};
    int rc = 0;
    if (cls != H5S_SIMPLE && cls != H5S_SCALAR)
        rc = fail(c, "%s: dataspace is neither simple nor scalar", where);
    else if (rank < 0 || rank > QC_MAX_DIMS || rank != ndim)
        rc = fail(c, "%s: data has %d dimensions but attribute 'shape' has %d", where, rank, ndim);
    else if (rank && H5Sget_simple_extent_dims(sp, dims, NULL) < 0)
        rc = fail(c, "%s: cannot read the dataspace", where);
    for (int i = 0; !rc && i < rank; i++)
        if ((uint64_t)shape[i] != (uint64_t)dims[i] || shape[i] < 0)
            rc = fail(c, "%s: attribute 'shape'[%d] = %lld disagrees with the data (%llu)", where,
                      i, (long long)shape[i], (unsigned long long)dims[i]);
    H5Eclear2(H5E_DEFAULT);
    close_id(sp);
    return rc;
}

/* The shape of the dataspace itself, for a file without 'shape' attributes. */
static int dataspace_shape(const gctx *c, hid_t ds, const char *where, int *ndim, int64_t *shape)
{
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[QC_MAX_DIMS] = {0};
    int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    int rc = rank < 0 || rank > QC_MAX_DIMS || (rank && H5Sget_simple_extent_dims(sp, dims, NULL) < 0);
    close_id(sp);
    if (rc)
        return fail(c, "%s: dataspace has %d dimensions, at most %d supported", where, rank,
                    QC_MAX_DIMS);
    *ndim = rank;
    for (int i = 0; i < rank; i++)
        shape[i] = (int64_t)dims[i];
    return 0;
}

/* qc_dtype, layout and shape; in a lenient read an absent attribute means the storage name,
 * "row_major" and the dataspace (an external runner writes plain h5py datasets). */
static int describe(const gctx *c, hid_t ds, const char *where, qc_storage st, char *dtype,
                    char *layout, int *ndim, int64_t *shape)
{
    int rc = 0;
    if (c->lenient && H5Aexists(ds, "qc_dtype") <= 0)
        snprintf(dtype, QC_NAME_LEN, "%s", qc_storage_name(st));
    else
        rc = get_str(c, ds, where, "qc_dtype", dtype, QC_NAME_LEN);
    if (!rc && c->lenient && H5Aexists(ds, "layout") <= 0)
        snprintf(layout, QC_NAME_LEN, "row_major");
    else if (!rc)
        rc = get_str(c, ds, where, "layout", layout, QC_NAME_LEN);
    if (!rc && c->lenient && H5Aexists(ds, "shape") <= 0)
        rc = dataspace_shape(c, ds, where, ndim, shape);
    else if (!rc)
        rc = get_shape(c, ds, where, ndim, shape);
    return rc;
}

/* Every check on the description before any data is read; then the read itself, where HDF5
 * verifies each chunk's fletcher32 (H5Pset_edc_check's default is on). */
static int read_tensor(const gctx *c, hid_t ds, const char *where, const char *name, qc_tensor *t)
{
    char dtype[QC_NAME_LEN], layout[QC_NAME_LEN];
    int64_t shape[QC_MAX_DIMS] = {0};
    int ndim = 0;
    hid_t ft = H5Dget_type(ds);
    int st = ft >= 0 ? storage_of(ft) : -1;
    close_id(ft);
    if (st < 0)
        return fail(c, "%s: unsupported storage type (qcheck tensors are uint8, uint16, int32, "
                       "uint32, float32 or float64)", where);
    int rc = describe(c, ds, where, (qc_storage)st, dtype, layout, &ndim, shape);
    if (!rc)
        rc = check_extent(c, ds, where, ndim, shape);
    int nan_any = 0;
    if (!rc && H5Aexists(ds, "nan_payload") > 0) {
        char v[QC_NAME_LEN];
        rc = get_str(c, ds, where, "nan_payload", v, sizeof v);
        if (!rc && (strcmp(v, "any") || st != QC_ST_F32))
            rc = fail(c, "%s: nan_payload '%s' (the one value is \"any\", on float32 data)", where, v);
        nan_any = !rc;
    }
    if (!rc && !dtype_fits(dtype, (qc_storage)st))
        rc = fail(c, "%s: qc_dtype %s does not fit storage %s", where, dtype,
                  qc_storage_name((qc_storage)st));
    size_t bytes = 0;
    if (!rc && qc_tensor_bytes((qc_storage)st, ndim, shape, &bytes))
        rc = fail(c, "%s: shape has more than 2^40 elements", where);
    if (!rc && bytes / QC_GOLDEN_MAX_EXPANSION > (size_t)c->file_bytes)
        rc = fail(c, "%s: %zu bytes of data cannot come from a file of %lld bytes (deflate expands at most "
                     "%d:1): the file is corrupt", where, bytes, (long long)c->file_bytes, QC_GOLDEN_MAX_EXPANSION);
    if (!rc && qc_tensor_alloc(t, name, (qc_storage)st, dtype, ndim, shape) != 0)
        rc = fail(c, "%s: out of memory for %zu bytes", where, bytes);
    if (rc)
        return rc;
    snprintf(t->layout, sizeof t->layout, "%s", layout);
    t->nan_any = nan_any;
    if (t->nbytes && H5Dread(ds, mem_type(t->storage), H5S_ALL, H5S_ALL, H5P_DEFAULT, t->data) < 0) {
        qc_tensor_free(t);
        return fail(c, "%s: data cannot be read, the file is corrupt (%s)", where, h5why(c));
    }
    return 0;
}

/* Member names of a group in creation order (as written here) or, for a group that does not
 * track it (written by another tool), in name order. */
static int list_members(const gctx *c, hid_t g, const char *where, char names[][QC_NAME_LEN],
                        int max, int *n)
{
    H5G_info_t info;
    hid_t gcpl = H5Gget_create_plist(g);
    unsigned order = 0;
    if (gcpl < 0 || H5Pget_link_creation_order(gcpl, &order) < 0 || H5Gget_info(g, &info) < 0) {
        close_id(gcpl);
        return fail(c, "%s: cannot list the group (%s)", where, h5why(c));
    }
    close_id(gcpl);
    H5_index_t index = (order & H5P_CRT_ORDER_INDEXED) ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
    if (info.nlinks > (hsize_t)max)
        return fail(c, "%s: %llu members, at most %d supported", where,
                    (unsigned long long)info.nlinks, max);
    for (hsize_t i = 0; i < info.nlinks; i++) {
        ssize_t len = H5Lget_name_by_idx(g, ".", index, H5_ITER_INC, i, names[i], QC_NAME_LEN,
                                         H5P_DEFAULT);
        if (len < 0 || len >= QC_NAME_LEN) {
            H5Eclear2(H5E_DEFAULT);
            return fail(c, "%s: member %llu has no name or one longer than %d bytes", where,
                        (unsigned long long)i, QC_NAME_LEN - 1);
        }
    }
    *n = (int)info.nlinks;
    return 0;
}

/* Opens member NAME of g and checks it is an object of the given kind (H5I_DATASET/H5I_GROUP). */
static hid_t open_member(const gctx *c, hid_t g, const char *where, H5I_type_t kind)
{
    hid_t o = H5Oopen(g, strrchr(where, '/') + 1, H5P_DEFAULT);
    if (o < 0) {
        fail(c, "%s: cannot be opened (%s)", where, h5why(c));
    } else if (H5Iget_type(o) != kind) {
        fail(c, "%s: is not a %s", where, kind == H5I_DATASET ? "dataset" : "group");
        close_id(o);
        o = -1;
    }
    return o;
}

static int read_set(const gctx *c, hid_t f, const char *gpath, qc_tensor_set *set)
{
    char names[QC_MAX_TENSORS][QC_NAME_LEN];
    int n = 0, rc = 0;
    set->n = 0;
    if (H5Lexists(f, gpath, H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return fail(c, "%s: group is missing", gpath);
    }
    hid_t g = H5Gopen2(f, gpath, H5P_DEFAULT);
    if (g < 0) {
        return fail(c, "%s: is not a group (%s)", gpath, h5why(c));
    }
    rc = list_members(c, g, gpath, names, QC_MAX_TENSORS, &n);
    for (int i = 0; !rc && i < n; i++) {
        char where[2 * QC_NAME_LEN + 32];
        snprintf(where, sizeof where, "%.63s/%.47s", gpath, names[i]);
        hid_t ds = open_member(c, g, where, H5I_DATASET);
        rc = ds < 0 ? QC_GOLDEN_EBADINPUT : read_tensor(c, ds, where, names[i], &set->t[i]);
        if (!rc)
            set->n = i + 1;
        close_id(ds);
    }
    close_id(g);
    if (rc)
        qc_set_free(set);
    return rc;
}

static int direct_read(const char *path, qc_golden_meta *m, qc_tensor_set *inputs, qc_tensor_set *outputs,
                       char *err, size_t errlen)
{
    quiet q;
    gctx c = {path, err, errlen, &q.last, 0, 0, 0};
    qc_golden_meta local;
    hid_t f;
    quiet_on(&q);
    if (inputs)
        inputs->n = 0;
    if (outputs)
        outputs->n = 0;
    int rc = open_file(&c, &f);
    if (!rc)
        rc = read_meta(&c, f, m ? m : &local);
    if (!rc && inputs)
        rc = read_set(&c, f, "/inputs", inputs);
    if (!rc && outputs)
        rc = read_set(&c, f, "/outputs", outputs);
    if (rc && inputs)
        qc_set_free(inputs);
    if (f >= 0)
        H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    quiet_off(&q);
    return rc;
}

static int list_stages(const gctx *c, hid_t f, char names[][QC_NAME_LEN], int max, int *n)
{
    if (H5Lexists(f, "/stages", H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return 0; /* a golden of an op without stages */
    }
    hid_t g = H5Gopen2(f, "/stages", H5P_DEFAULT);
    if (g < 0)
        return fail(c, "/stages: is not a group");
    int rc = list_members(c, g, "/stages", names, max, n);
    for (int i = 0; !rc && i < *n; i++) {
        char where[QC_NAME_LEN + 16];
        snprintf(where, sizeof where, "/stages/%s", names[i]);
        hid_t s = open_member(c, g, where, H5I_GROUP);
        rc = s < 0 ? QC_GOLDEN_EBADINPUT : 0;
        close_id(s);
    }
    close_id(g);
    if (rc)
        *n = 0;
    return rc;
}

static int direct_stage_names(const char *path, char names[][QC_NAME_LEN], int max, int *n, char *err,
                              size_t errlen)
{
    quiet q;
    gctx c = {path, err, errlen, &q.last, 0, 0, 0};
    hid_t f;
    if (!n || (max > 0 && !names))
        return fail(&c, "qc_golden_stage_names: NULL output arguments");
    *n = 0;
    quiet_on(&q);
    int rc = open_file(&c, &f);
    if (!rc)
        rc = list_stages(&c, f, names, max < 0 ? 0 : max, n);
    if (f >= 0)
        H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    quiet_off(&q);
    return rc;
}

static int direct_read_stage(const char *path, const char *stage, qc_tensor_set *out, char *err,
                             size_t errlen)
{
    quiet q;
    gctx c = {path, err, errlen, &q.last, 0, 0, 0};
    char gpath[QC_NAME_LEN + 16];
    hid_t f;
    if (!out)
        return fail(&c, "qc_golden_read_stage: NULL output set");
    out->n = 0;
    if (!stage || !link_name_ok(stage, QC_NAME_LEN))
        return fail(&c, "stage name '%s' is not valid", stage ? stage : "(null)");
    snprintf(gpath, sizeof gpath, "/stages/%s", stage);
    quiet_on(&q);
    int rc = open_file(&c, &f);
    if (!rc)
        rc = read_set(&c, f, gpath, out);
    if (f >= 0)
        H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    quiet_off(&q);
    return rc;
}

static int direct_read_outputs(const char *path, qc_tensor_set *out, char *err, size_t errlen)
{
    quiet q;
    gctx c = {path, err, errlen, &q.last, 1, 0, 0};
    hid_t f;
    if (!out)
        return fail(&c, "qc_golden_read_outputs: NULL output set");
    out->n = 0;
    quiet_on(&q);
    int rc = open_file(&c, &f);
    if (!rc)
        rc = read_set(&c, f, "/outputs", out);
    if (f >= 0)
        H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    quiet_off(&q);
    return rc;
}

/* ---- reading in a child process ----------------------------------------------------------- */

/* libhdf5 1.10.8 itself crashes on some corrupt files (SIGSEGV, SIGBUS, SIGFPE inside H5Fopen,
 * H5Dread, attribute reads: 79 of 104 fuzzed files once killed `golden verify`). No check before
 * the call can rule that out, so every read of a file runs in a forked child: the child reads with
 * the functions above and sends what it read through a pipe; the parent checks every tensor
 * header it receives against the file's size before allocating. A child that dies (a signal, or
 * QC_GOLDEN_READ_SECONDS without an answer) is an error naming the file, never the parent's
 * crash. QCHECK_GOLDEN_INPROCESS=1 reads in the calling process instead (for a debugger). */
#define QC_GOLDEN_READ_SECONDS 600
#define QC_GOLDEN_WIRE_MAGIC 0x51434752u /* "QCGR" */

enum { RQ_GOLDEN, RQ_STAGE_NAMES, RQ_STAGE, RQ_OUTPUTS };

typedef struct request {
    int kind;
    const char *path, *stage;
    qc_golden_meta *meta;      /* RQ_GOLDEN: may be NULL */
    qc_tensor_set *a, *b;      /* RQ_GOLDEN: inputs, outputs (either may be NULL); else a */
    char (*names)[QC_NAME_LEN]; /* RQ_STAGE_NAMES */
    int max, *n;
} request;

static int run_direct(const request *q, char *err, size_t errlen)
{
    switch (q->kind) {
    case RQ_GOLDEN: return direct_read(q->path, q->meta, q->a, q->b, err, errlen);
    case RQ_STAGE_NAMES: return direct_stage_names(q->path, q->names, q->max, q->n, err, errlen);
    case RQ_STAGE: return direct_read_stage(q->path, q->stage, q->a, err, errlen);
    default: return direct_read_outputs(q->path, q->a, err, errlen);
    }
}

static int recv_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n) {
        ssize_t k = read(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k, n -= (size_t)k;
    }
    return 0;
}

static int send_set(int fd, const qc_tensor_set *set)
{
    int32_t n = set ? set->n : 0;
    int bad = qc_write_all(fd, &n, sizeof n);
    for (int i = 0; !bad && i < n; i++) {
        qc_tensor h = set->t[i];
        h.data = NULL;
        bad = qc_write_all(fd, &h, sizeof h) || (h.nbytes && qc_write_all(fd, set->t[i].data, h.nbytes));
    }
    return bad;
}

/* A corrupt header can make libhdf5 itself allocate what it claims (90 GB for a fuzzed file of a
 * few KB): the child's data may grow by at most what the file can hold, twice (libhdf5's buffer
 * and our copy), plus 64 MiB (libhdf5's caches are a few MiB), so such an allocation fails at once
 * instead of taking the machine's memory. RLIMIT_DATA counts private writable mappings (Linux 4.7
 * and later), and the limit is set above what the child already has: AddressSanitizer's shadow is
 * not counted against it, its allocator's mappings are (RLIMIT_AS would miss those: they lie in a
 * region reserved at start; docs/DECISIONS.md). */
static void limit_child_memory(const char *path)
{
    struct stat st;
    unsigned long long data_kb = 0;
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmData: %llu kB", &data_kb) == 1)
            break;
    if (f)
        fclose(f);
    if (!data_kb || stat(path, &st) != 0 || (uint64_t)st.st_size > (UINT64_C(1) << 40))
        return;
    uint64_t cap = data_kb * 1024 + (UINT64_C(64) << 20) + 2 * QC_GOLDEN_MAX_EXPANSION * (uint64_t)st.st_size;
    struct rlimit now;
    if (getrlimit(RLIMIT_DATA, &now) == 0 && (now.rlim_cur == RLIM_INFINITY || now.rlim_cur > cap)) {
        struct rlimit lim = {(rlim_t)cap, now.rlim_max};
        setrlimit(RLIMIT_DATA, &lim);
    }
}

/* The child: read, send, exit. Crash signals take their default action, so that a crash in
 * libhdf5 is a plain signal death (no sanitizer or fuzzer handler report) and no core file. */
static void child_read(const request *q, int fd)
{
    static const int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGPIPE};
    for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++)
        signal(crash[i], SIG_DFL);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    limit_child_memory(q->path);
    alarm(QC_GOLDEN_READ_SECONDS);
    char err[1024] = "";
    int32_t head[2] = {(int32_t)QC_GOLDEN_WIRE_MAGIC, run_direct(q, err, sizeof err)};
    int bad = qc_write_all(fd, head, sizeof head) || qc_write_all(fd, err, sizeof err);
    if (!bad && !head[1] && q->kind == RQ_GOLDEN)
        bad = qc_write_all(fd, q->meta, sizeof *q->meta) || send_set(fd, q->a) || send_set(fd, q->b);
    else if (!bad && !head[1] && q->kind == RQ_STAGE_NAMES)
        bad = qc_write_all(fd, q->n, sizeof *q->n) || qc_write_all(fd, q->names, (size_t)*q->n * QC_NAME_LEN);
    else if (!bad && !head[1])
        bad = send_set(fd, q->a);
    _exit(bad ? 3 : 0);
}

/* A tensor header from the child, checked as if it came from the file itself. */
static int header_ok(const qc_tensor *h, int64_t file_bytes)
{
    size_t bytes;
    return terminated(h->name, sizeof h->name) && terminated(h->dtype, sizeof h->dtype) &&
           terminated(h->layout, sizeof h->layout) && (unsigned)h->storage < QC_ST_COUNT &&
           qc_tensor_bytes(h->storage, h->ndim, h->shape, &bytes) == 0 && bytes == h->nbytes &&
           bytes / QC_GOLDEN_MAX_EXPANSION <= (size_t)file_bytes;
}

static int recv_set(int fd, qc_tensor_set *set, int64_t file_bytes)
{
    int32_t n;
    if (recv_all(fd, &n, sizeof n) || n < 0 || n > QC_MAX_TENSORS)
        return -1;
    set->n = 0;
    for (int i = 0; i < n; i++) {
        qc_tensor *t = &set->t[i];
        if (recv_all(fd, t, sizeof *t) || !header_ok(t, file_bytes))
            return -1;
        t->data = t->nbytes ? malloc(t->nbytes) : NULL;
        set->n = i + 1;
        if ((t->nbytes && !t->data) || (t->nbytes && recv_all(fd, t->data, t->nbytes))) {
            t->nbytes = t->data ? t->nbytes : 0;
            return -1;
        }
    }
    return 0;
}

/* Into set, or read and dropped when the caller did not ask for it (set NULL). */
static int recv_set_into(int fd, qc_tensor_set *set, int64_t file_bytes)
{
    qc_tensor_set scratch = {0};
    int rc = recv_set(fd, set ? set : &scratch, file_bytes);
    qc_set_free(&scratch);
    return rc;
}

/* The parent's side of one request: 0 and the outputs, the child's own error, or an error that
 * says how the child failed. */
static int recv_answer(const request *q, int fd, int64_t file_bytes, char *err, size_t errlen)
{
    int32_t head[2];
    char cerr[1024];
    if (recv_all(fd, head, sizeof head) || head[0] != (int32_t)QC_GOLDEN_WIRE_MAGIC || recv_all(fd, cerr, sizeof cerr))
        return -1;
    cerr[sizeof cerr - 1] = '\0';
    if (head[1]) {
        if (err && errlen)
            snprintf(err, errlen, "%s", cerr);
        return head[1] == QC_GOLDEN_EBADINPUT ? QC_GOLDEN_EBADINPUT : -1;
    }
    if (q->kind == RQ_GOLDEN) {
        qc_golden_meta m;
        if (recv_all(fd, &m, sizeof m) || recv_set_into(fd, q->a, file_bytes) || recv_set_into(fd, q->b, file_bytes))
            return -1;
#define TERMINATE(f) m.f[sizeof m.f - 1] = '\0';
        META_STRINGS(TERMINATE)
#undef TERMINATE
        if (q->meta)
            *q->meta = m;
        return 0;
    }
    if (q->kind == RQ_STAGE_NAMES) {
        int32_t n;
        if (recv_all(fd, &n, sizeof n) || n < 0 || n > q->max || recv_all(fd, q->names, (size_t)n * QC_NAME_LEN))
            return -1;
        for (int i = 0; i < n; i++)
            q->names[i][QC_NAME_LEN - 1] = '\0';
        *q->n = n;
        return 0;
    }
    return recv_set(fd, q->a, file_bytes);
}

static void clear_outputs(const request *q)
{
    if (q->a)
        qc_set_free(q->a);
    if (q->b)
        qc_set_free(q->b);
    if (q->n)
        *q->n = 0;
}

static int child_failed(const char *path, int status, char *err, size_t errlen)
{
    gctx c = {path, err, errlen, NULL, 0, 0, 0};
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return fail(&c, "the reader process gave no complete answer (a tensor larger than the file can hold, or it was killed)");
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        return fail(&c, "reading it took more than %d s: the file is corrupt (HDF5 did not finish)",
                    QC_GOLDEN_READ_SECONDS);
    if (WIFSIGNALED(status))
        return fail(&c, "the HDF5 library crashed reading it (signal %d, %s): the file is corrupt",
                    WTERMSIG(status), strsignal(WTERMSIG(status)));
    return fail(&c, "the reader process failed (exit status %d): the file is corrupt or memory ran out",
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static int isolated(const request *q, char *err, size_t errlen)
{
    const char *inproc = getenv("QCHECK_GOLDEN_INPROCESS");
    struct stat st;
    if ((inproc && !strcmp(inproc, "1")) || !q->path || stat(q->path, &st) || !S_ISREG(st.st_mode))
        return run_direct(q, err, errlen); /* it names what is wrong with the path itself */
    int fds[2];
    if (pipe(fds))
        return fail(&(gctx){q->path, err, errlen, NULL, 0, 0, 0}, "cannot make a pipe (%s)", strerror(errno));
    fflush(NULL); /* the child exits with _exit: nothing buffered is written twice */
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child_read(q, fds[1]);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return fail(&(gctx){q->path, err, errlen, NULL, 0, 0, 0}, "cannot fork a reader (%s)", strerror(errno));
    }
    char cerr[1024] = "";
    int rc = recv_answer(q, fds[0], (int64_t)st.st_size, cerr, sizeof cerr);
    close(fds[0]);
    if (rc < 0)
        kill(pid, SIGKILL); /* an incomplete or malformed answer: the child has nothing more to say */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc < 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        status = 0; /* killed here, not by its own fault: reported as a malformed answer */
    if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    clear_outputs(q);
    if (rc == QC_GOLDEN_EBADINPUT) {
        if (err && errlen)
            snprintf(err, errlen, "%s", cerr);
        return rc;
    }
    return child_failed(q->path, status, err, errlen);
}

int qc_golden_read(const char *path, qc_golden_meta *m, qc_tensor_set *inputs,
                   qc_tensor_set *outputs, char *err, size_t errlen)
{
    qc_golden_meta local;
    request q = {RQ_GOLDEN, path, NULL, m ? m : &local, inputs, outputs, NULL, 0, NULL};
    if (inputs)
        inputs->n = 0;
    if (outputs)
        outputs->n = 0;
    return isolated(&q, err, errlen);
}

int qc_golden_stage_names(const char *path, char names[][QC_NAME_LEN], int max, int *n, char *err,
                          size_t errlen)
{
    if (!n || (max > 0 && !names))
        return fail(&(gctx){path, err, errlen, NULL, 0, 0, 0}, "qc_golden_stage_names: NULL output arguments");
    *n = 0;
    request q = {RQ_STAGE_NAMES, path, NULL, NULL, NULL, NULL, names, max < 0 ? 0 : max, n};
    return isolated(&q, err, errlen);
}

int qc_golden_read_stage(const char *path, const char *stage, qc_tensor_set *out, char *err,
                         size_t errlen)
{
    if (!out)
        return fail(&(gctx){path, err, errlen, NULL, 0, 0, 0}, "qc_golden_read_stage: NULL output set");
    out->n = 0;
    request q = {RQ_STAGE, path, stage, NULL, out, NULL, NULL, 0, NULL};
    return isolated(&q, err, errlen);
}

int qc_golden_read_outputs(const char *path, qc_tensor_set *out, char *err, size_t errlen)
{
    if (!out)
        return fail(&(gctx){path, err, errlen, NULL, 1, 0, 0}, "qc_golden_read_outputs: NULL output set");
    out->n = 0;
    request q = {RQ_OUTPUTS, path, NULL, NULL, out, NULL, NULL, 0, NULL};
    return isolated(&q, err, errlen);
}

#endif /* QC_HAVE_HDF5 */
