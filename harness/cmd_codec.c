/* cmd_codec.c: `qcheck decode` and `qcheck cast` (docs/spec/cli.md "Tool commands"). Raw files are
 * little-endian and headerless; 4- and 6-bit codes take one byte each unless --packed (e2m1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tensor.h"

static const char *const policy_help =
    "  --profile P         ml_dtypes (default), torch, ptx: every policy at once\n"
    "  --overflow nan|satfinite    finite overflow and +-Inf: NaN code (Inf for e5m2/bf16/f16) or +-max\n"
    "  --nan keep|canonical        NaN input: keep its sign, or always the positive NaN\n"
    "  --nan-code ones|quiet|payload  which NaN code e5m2/bf16/f16 get (0x7F/0x7E/truncated payload)\n"
    "  --ties even|zero|away       rounding ties (profiles: fp8/fp6/fp4 per profile, bf16/f16 even)\n"
    "  --nonan posmax|torchao|ml_dtypes|zero  NaN into e2m1/e2m3/e3m2 (no NaN code)\n"
    "  --zero-sign keep|drop|modelopt  sign of results that round to zero (profiles set it for fp4/fp6)\n"
    "  --e8m0 RULE         rne ml_dtypes ceil rz rceil deepgemm floor torchao-ceil even triton-up\n"
    "                      triton-down log2-ceil (docs/spec/formats.md §2.2)\n"
    "  --e8m0-emax N       floor, torchao-ceil, even: emax of the element format [0]\n"
    "  --e8m0-mbits N      even: mantissa bits of the element format [3]\n"
    "  --e8m0-decode D     torch (=cuda, ml_dtypes), shift, exp2, trtllm-rcp, cutedsl-inv, torchao, torchao-rcp\n";

static size_t code_bytes(qc_format f) { return f == QC_F32 ? 4 : (f == QC_BF16 || f == QC_F16) ? 2 : 1; }

static uint32_t load_code(const uint8_t *p, size_t width)
{
    uint32_t v = 0;
    for (size_t i = 0; i < width; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static void store_code(uint8_t *p, size_t width, uint32_t v)
{
    for (size_t i = 0; i < width; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int cmd_decode(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "decode", argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a.help) {
        printf("usage: qcheck decode --format FMT [--profile P] OUT\n"
               "Writes the decode table of FMT: one little-endian fp32 per code, codes in increasing\n"
               "order (256 for 8-bit, 64 for 6-bit, 16 for 4-bit, 65536 for bf16/f16). NaN codes give\n"
               "sign|0x7FC00000 for 8-bit and narrower formats, the exact widening for bf16/f16.\n"
               "  --format FMT        bf16 f16 e4m3fn e4m3fnuz e5m2 e5m2fnuz e8m0 e2m1 e2m3 e3m2\n"
               "  --profile P         a cast profile, or an e8m0 decoder name: torch, cuda, shift,\n"
               "                      exp2, trtllm-rcp, cutedsl-inv, torchao, torchao-rcp (they differ on bytes 0 and 255)\n"
               "  --e8m0-decode D     the same as an explicit flag\n");
        return QC_EXIT_OK;
    }
    const char *fname = qc_opt(&a, "format");
    if (!fname) {
        qc_error(a.cmd, "--format is required");
        return QC_EXIT_USAGE;
    }
    qc_format f;
    qc_cast_policy p;
    if (qc_format_or_die(a.cmd, fname, &f) || qc_policy_from_args(&a, f, &p) || qc_check_all_used(&a))
        return QC_EXIT_USAGE;
    if (f == QC_F32) {
        qc_error(a.cmd, "f32 has no decode table (2^32 codes); choose a narrower format");
        return QC_EXIT_USAGE;
    }
    if (a.npos != 1) {
        qc_error(a.cmd, "expected one output file, got %d arguments", a.npos);
        return QC_EXIT_USAGE;
    }
    size_t n = (size_t)1 << qcref_format_bits(f);
    uint8_t *out = malloc(n * 4);
    if (!out)
        return QC_EXIT_USAGE;
    for (size_t c = 0; c < n; c++)
        store_code(out + 4 * c, 4, qc_f32_bits(qcref_decode(f, (uint32_t)c, &p)));
    int rc = qc_write_file(a.cmd, a.pos[0], out, n * 4);
    free(out);
    return rc;
}

static void cast_help(void)
{
    printf("usage: qcheck cast --from FMT --to FMT [policy options] IN OUT\n"
           "Converts every value of IN (raw little-endian, densely packed) to OUT. One side must be\n"
           "f32 or a conversion through f32 is done (decoding is exact). 8-, 6- and 4-bit codes take\n"
           "one byte each (the code in the low bits); bf16/f16 two bytes.\n"
           "  --from FMT, --to FMT  f32 bf16 f16 e4m3fn e4m3fnuz e5m2 e5m2fnuz e8m0 e2m1 e2m3 e3m2\n"
           "  --packed            e2m1 side packed two per byte, even element in the low nibble\n"
           "  --swap-nibbles      with --packed: even element in the high nibble\n%s",
           policy_help);
}

/* The largest input cast reads: 2^40 values at most (reference/qc_checked.h), and an eighth of the
 * memory, room for the input, its unpacked codes and an output of up to 4 bytes a byte. */
static size_t cast_input_max(void)
{
    size_t mem = qc_memory_bytes() / 8;
    return mem < ((size_t)1 << 40) ? mem : (size_t)1 << 40;
}

int cmd_cast(int argc, char **argv)
{
    static const char *const flags[] = {"packed", "swap-nibbles", NULL};
    qc_args a;
    if (qc_parse_args(&a, "cast", argc, argv, flags))
        return QC_EXIT_USAGE;
    if (a.help) {
        cast_help();
        return QC_EXIT_OK;
    }
    const char *from_name = qc_opt(&a, "from"), *to_name = qc_opt(&a, "to");
    if (!from_name || !to_name) {
        qc_error(a.cmd, "--from and --to are required");
        return QC_EXIT_USAGE;
    }
    qc_format from, to;
    if (qc_format_or_die(a.cmd, from_name, &from) || qc_format_or_die(a.cmd, to_name, &to))
        return QC_EXIT_USAGE;
    int packed = qc_flag(&a, "packed"), swap = qc_flag(&a, "swap-nibbles");
    qc_cast_policy pin, pout;
    if (qc_policy_from_args(&a, from, &pin) || qc_policy_from_args(&a, to, &pout) || qc_check_all_used(&a))
        return QC_EXIT_USAGE;
    if ((packed || swap) && from != QC_E2M1 && to != QC_E2M1) {
        qc_error(a.cmd, "--packed and --swap-nibbles apply to e2m1 only");
        return QC_EXIT_USAGE;
    }
    if (swap && !packed) {
        qc_error(a.cmd, "--swap-nibbles needs --packed");
        return QC_EXIT_USAGE;
    }
    if (a.npos != 2) {
        qc_error(a.cmd, "expected IN and OUT files, got %d arguments", a.npos);
        return QC_EXIT_USAGE;
    }

    uint8_t *in;
    size_t size;
    if (qc_read_file(a.cmd, a.pos[0], cast_input_max(), &in, &size))
        return QC_EXIT_USAGE;
    size_t win = code_bytes(from), wout = code_bytes(to);
    int in_packed = packed && from == QC_E2M1, out_packed = packed && to == QC_E2M1;
    if (size % win != 0) {
        qc_error(a.cmd, "input '%s' has %zu bytes, not a multiple of %zu (one %s value)", a.pos[0], size, win,
                 qc_format_name(from));
        free(in);
        return QC_EXIT_USAGE;
    }
    size_t n = in_packed ? size * 2 : size / win;
    uint8_t *codes = NULL;
    if (in_packed) {
        codes = malloc(n ? n : 1);
        if (codes)
            qcref_fp4_unpack(in, n, swap, codes);
    }
    const uint8_t *src = in_packed ? codes : in;
    uint8_t *out = malloc(n * wout + 1);
    if (!out || (in_packed && !codes)) {
        qc_error(a.cmd, "out of memory for %zu values", n);
        free(in), free(codes), free(out);
        return QC_EXIT_USAGE;
    }
    for (size_t i = 0; i < n; i++) {
        float v = qcref_decode(from, load_code(src + i * win, win), &pin);
        store_code(out + i * wout, wout, qcref_encode(to, v, &pout));
    }
    size_t out_size = n * wout;
    if (out_packed) {
        qcref_fp4_pack(out, n, swap, out); /* in place: byte i/2 is written after codes i, i+1 are read */
        out_size = (n + 1) / 2;
    }
    int rc = qc_write_file(a.cmd, a.pos[1], out, out_size);
    free(in), free(codes), free(out);
    return rc;
}
