/* selftest.c: backends that misbehave on purpose so that the harness's isolation can be tested:
 * one crashes, one hangs, one refuses. They run only with QCHECK_SELFTEST=1 and never by default. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../registry.h"

static const char *unless_selftest(void)
{
    const char *v = getenv("QCHECK_SELFTEST");
    return v && *v == '1' ? NULL : "harness self-test backend (set QCHECK_SELFTEST=1)";
}

static int crash(qc_op_call *c)
{
    (void)c;
    raise(SIGSEGV);
    return 0;
}

static int hang(qc_op_call *c)
{
    (void)c;
    for (;;)
        pause();
    return 0;
}

static int refuse(qc_op_call *c)
{
    snprintf(c->err, c->errlen, "selftest:refuse refuses every instance");
    return 1;
}

static const qc_impl crash_impl[] = {{"cast", crash}};
static const qc_impl hang_impl[] = {{"cast", hang}};
static const qc_impl refuse_impl[] = {{"cast", refuse}};

const qc_backend qc_selftest_crash = {"selftest:crash", "selftest", "raises SIGSEGV in every cast", unless_selftest,
                                      .impls = crash_impl, .nimpls = 1};
const qc_backend qc_selftest_hang = {"selftest:hang", "selftest", "never returns from a cast", unless_selftest,
                                     .impls = hang_impl, .nimpls = 1};
const qc_backend qc_selftest_refuse = {"selftest:refuse", "selftest", "refuses every cast", unless_selftest,
                                       .impls = refuse_impl, .nimpls = 1};

const qc_backend *const qc_selftest_backends[] = {&qc_selftest_crash, &qc_selftest_hang, &qc_selftest_refuse};
const int qc_selftest_backend_count = 3;
