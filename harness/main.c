/* main.c: the qcheck command line (docs/spec/cli.md). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef QC_VERSION
#define QC_VERSION "0.0.0"
#endif

static void usage(FILE *to)
{
    fprintf(to,
            "qcheck %s: the correctness gate for low-precision quantization kernels\n"
            "\n"
            "usage: qcheck COMMAND [options]   (qcheck COMMAND --help for each)\n"
            "\n"
            "tool commands (raw little-endian files in and out):\n"
            "  decode    write the fp32 decode table of a format\n"
            "  cast      convert values between f32 and any element format under explicit policies\n"
            "  layout    apply or invert a scale/weight layout map (qcheck layout list)\n"
            "  quant     quantize an fp32 tensor with a recipe and a recipe profile\n"
            "  dequant   dequantize a recipe's payload and scales back to fp32\n"
            "\n"
            "suite commands:\n"
            "  run       run the conformance suite and print one verdict line per case\n"
            "  list      list cases, ops, backends, profiles, formats\n"
            "  golden    generate or verify HDF5 goldens (golden generate|verify)\n"
            "  export    write one case instance to HDF5 for an external runner\n"
            "  verify    check an external runner's HDF5 outputs against a golden\n"
            "  identify  rank the profiles of a quant recipe by how well they match a kernel's outputs\n"
            "  coverage  which rounding and scale boundaries the quant cases' inputs reach\n"
            "  report    merge the reports of the shards of one run (report merge DIR... --out DIR)\n"
            "  bringup   characterise a device's conversion instructions against the reference\n"
            "\n"
            "qcheck --case NAME is qcheck run --case NAME\n"
            "\n"
            "run, list, golden generate and export take --max-instances N: the most combinations one case's\n"
            "sweep may make for one tier, counted before any is built (default 65536; docs/cases.md)\n"
            "\n"
            "exit status: 0 success, 1 a check failed, 2 bad usage or bad input\n",
            QC_VERSION);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return QC_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return QC_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("qcheck %s\n", QC_VERSION);
        return QC_EXIT_OK;
    }
    static const struct { const char *name; int (*fn)(int, char **); } commands[] = {
        {"decode", cmd_decode}, {"cast", cmd_cast},     {"list", cmd_list},     {"run", cmd_run},
        {"golden", cmd_golden}, {"export", cmd_export}, {"verify", cmd_verify}, {"identify", cmd_identify},
        {"coverage", cmd_coverage}, {"report", cmd_report},
        {"layout", cmd_layout},     {"quant", cmd_quant},   {"dequant", cmd_dequant},
        {"bringup", cmd_bringup},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].fn(argc - 2, argv + 2);
    if (strcmp(cmd, "--case") == 0) /* qcheck --case NAME == qcheck run --case NAME */
        return cmd_run(argc - 1, argv + 1);
    fprintf(stderr, "qcheck: unknown command '%s' (see qcheck --help)\n", cmd);
    return QC_EXIT_USAGE;
}
