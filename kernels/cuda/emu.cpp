/* emu.cpp: the fiber scheduler of the CPU emulation (emu.h). Test-only.
 *
 * A block of T threads is T ucontext fibers. The scheduler resumes every runnable fiber in turn;
 * a fiber runs until it finishes or waits: at __syncthreads() for the block's live threads, in a
 * shuffle for every lane of its warp (a shuffle writes its value to the warp's slots, waits, reads
 * its source lane's slot, and waits again so that no lane overwrites a slot before all have read
 * it). When a pass makes no progress and no wait can be released, the kernel would deadlock or be
 * undefined on a GPU: the emulation prints the block and aborts. */
#include <stdio.h>
#include <ucontext.h>

#include <memory>
#include <vector>

#include "gpu.h"

qck_dim3 qck_emu_block_idx, qck_emu_block_dim, qck_emu_grid_dim;

namespace {

enum { RUN, WAIT_WARP, WAIT_BLOCK, DONE };
const size_t STACK = 256 * 1024;

struct fiber {
    ucontext_t ctx;
    int state;
    uint32_t slot;
};

std::vector<fiber> F;
std::vector<std::unique_ptr<char[]>> stacks; /* one per thread of the widest block, kept between launches */
ucontext_t sched;
unsigned cur, threads;
const std::function<void()> *body;

void entry()
{
    (*body)();
    F[cur].state = DONE; /* uc_link returns to the scheduler */
}

void wait(int state)
{
    F[cur].state = state;
    swapcontext(&F[cur].ctx, &sched);
}

/* Every lane of the current fiber's warp has written its slot (and is waiting). */
uint32_t exchange(uint32_t v, unsigned src_lane)
{
    F[cur].slot = v;
    wait(WAIT_WARP);
    unsigned base = cur & ~31u;
    uint32_t r = F[base + src_lane].slot;
    wait(WAIT_WARP);
    return r;
}

} // namespace

unsigned qck_emu_tid(void) { return cur; }

void __syncthreads(void) { wait(WAIT_BLOCK); }

uint32_t qck_emu_shfl_xor(uint32_t v, int mask, int width)
{
    unsigned lane = cur & 31u, seg = lane & ~(unsigned)(width - 1), src = lane ^ (unsigned)mask;
    if ((src & ~(unsigned)(width - 1)) != seg) /* outside the lane's segment: its own value (CUDA) */
        src = lane;
    return exchange(v, src);
}

uint32_t qck_emu_shfl(uint32_t v, int src, int width)
{
    unsigned lane = cur & 31u, seg = lane & ~(unsigned)(width - 1);
    return exchange(v, seg + ((unsigned)src % (unsigned)width));
}

int qck_emu_any(int p) /* a warp vote as five exchanges */
{
    uint32_t v = p != 0;
    for (int m = 1; m < 32; m <<= 1)
        v |= qck_emu_shfl_xor(v, m, 32);
    return (int)v;
}

void qck_emu_launch(unsigned grid, unsigned block, const std::function<void()> &b)
{
    if (block == 0 || grid == 0)
        return;
    body = &b;
    threads = block;
    qck_emu_grid_dim = qck_dim3{grid, 1, 1};
    qck_emu_block_dim = qck_dim3{block, 1, 1};
    if (F.size() < block) {
        F.resize(block);
        while (stacks.size() < block)
            stacks.emplace_back(new char[STACK]);
    }
    for (unsigned bx = 0; bx < grid; bx++) {
        qck_emu_block_idx = qck_dim3{bx, 0, 0};
        for (unsigned t = 0; t < block; t++) {
            getcontext(&F[t].ctx);
            F[t].ctx.uc_stack.ss_sp = stacks[t].get();
            F[t].ctx.uc_stack.ss_size = STACK;
            F[t].ctx.uc_link = &sched;
            makecontext(&F[t].ctx, entry, 0);
            F[t].state = RUN;
        }
        for (;;) {
            bool progress = false;
            for (unsigned t = 0; t < block; t++)
                if (F[t].state == RUN) {
                    cur = t;
                    swapcontext(&sched, &F[t].ctx);
                    progress = true;
                }
            unsigned live = 0, at_block = 0;
            for (unsigned w = 0; w < block; w += 32) {
                unsigned end = w + 32 < block ? w + 32 : block, waiting = 0, done = 0;
                for (unsigned t = w; t < end; t++)
                    waiting += F[t].state == WAIT_WARP, done += F[t].state == DONE;
                if (waiting && waiting == end - w) {
                    for (unsigned t = w; t < end; t++)
                        F[t].state = RUN;
                    progress = true;
                } else if (waiting && waiting + done == end - w) {
                    fprintf(stderr, "cuda-emu: block %u: a shuffle in warp %u with exited lanes\n", bx, w / 32);
                    abort();
                }
            }
            for (unsigned t = 0; t < block; t++)
                live += F[t].state != DONE, at_block += F[t].state == WAIT_BLOCK;
            if (live == 0)
                break;
            if (at_block == live) {
                for (unsigned t = 0; t < block; t++)
                    if (F[t].state == WAIT_BLOCK)
                        F[t].state = RUN;
                progress = true;
            }
            if (!progress) {
                fprintf(stderr, "cuda-emu: block %u of %u threads cannot progress (%u live, %u at __syncthreads)\n", bx,
                        block, live, at_block);
                abort();
            }
        }
    }
}
