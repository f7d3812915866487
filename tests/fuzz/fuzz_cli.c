/* fuzz_cli.c: libFuzzer target for the raw-tensor commands and their shape parsers: `qcheck
 * quant`, `dequant`, `layout apply|inverse` and `cast` (harness/cmd_quant.c, cmd_layout.c,
 * cmd_codec.c, quant_job.c, reference/layouts). The input is: one byte choosing the command, its
 * arguments separated by NUL bytes up to an empty one, then the bytes of the input file(s). The
 * input and output files are IN and OUT in a scratch folder, which is also the working folder;
 * an argument holding '/' is dropped, so that nothing is written outside it. */
#include "cli.h"
#include "fuzz_util.h"

static const char *scratch;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    scratch = fuzz_scratch();
    if (!scratch || chdir(scratch) != 0)
        scratch = NULL;
    return 0;
}

#define MAX_ARGV 48

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct { const char *name; int (*fn)(int, char **); int sub; } cmds[] = {
        {"quant", cmd_quant, 0}, {"dequant", cmd_dequant, 0}, {"apply", cmd_layout, 1},
        {"inverse", cmd_layout, 1}, {"cast", cmd_cast, 0},
    };
    char buf[4096], *argv[MAX_ARGV + 4];
    int argc = 0;
    if (!scratch || size < 1 || size > sizeof buf - 1)
        return 0;
    const int which = data[0] % (int)(sizeof cmds / sizeof cmds[0]);
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    size_t at = 0, end = size - 1;
    if (cmds[which].sub)
        argv[argc++] = (char *)cmds[which].name;
    while (at < end && buf[at] && argc < MAX_ARGV) { /* NUL-separated arguments up to an empty one */
        char *arg = buf + at;
        at += strlen(arg) + 1;
        if (!strchr(arg, '/'))
            argv[argc++] = arg;
    }
    at += at < end; /* the empty argument */
    const uint8_t *file = (const uint8_t *)buf + at;
    size_t nfile = at < end ? end - at : 0;
    fuzz_write("IN", file, nfile);
    fuzz_write("IN.q", file, nfile); /* dequant reads PREFIX.q, .scale, .gscale */
    fuzz_write("IN.scale", file, nfile);
    fuzz_write("IN.gscale", file, nfile);
    argv[argc++] = (char *)"IN";
    argv[argc++] = (char *)"OUT";
    argv[argc] = NULL;
    cmds[which].fn(argc, argv);
    fuzz_clean(scratch);
    return 0;
}
