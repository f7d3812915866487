/* moe_act.c: MoE activations and the W13 half orders (docs/spec/layouts.md §9.3, §6.1), fp32; exp,
 * erf and tanh correctly rounded (arith/exp_cr.h, erf_cr.h, tanh_cr.h: not the host's libm, so every
 * machine and the cuda backend give the same bits); the fp32 combine of model sm90-wgmma. */
#include <math.h>
#include <string.h>

#include "arith/erf_cr.h"
#include "arith/exp_cr.h"
#include "arith/tanh_cr.h"
#include "moe.h"

static const char *const act_names[QC_ACT_COUNT] = {"silu", "gelu", "gelu_tanh", "relu2", "swiglu_oai", "swiglu_step"};
static const char *const order_names[QC_W13_ORDER_COUNT] = {"gate_up", "up_gate", "interleaved"};

const char *qc_act_name(int a) { return a >= 0 && a < QC_ACT_COUNT ? act_names[a] : "?"; }
const char *qc_w13_order_name(int o) { return o >= 0 && o < QC_W13_ORDER_COUNT ? order_names[o] : "?"; }

static int find(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

int qc_act_from_name(const char *s) { return find(act_names, QC_ACT_COUNT, s); }
int qc_w13_order_from_name(const char *s) { return find(order_names, QC_W13_ORDER_COUNT, s); }
int qcref_act_gated(qc_act a) { return a != QC_ACT_RELU2; }

static float silu(float t) { return t / (1.0f + qcref_expf(-t)); }
static float sigmoid(float t) { return 1.0f / (1.0f + qcref_expf(-t)); }
static float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

float qcref_act_pair(const qc_act_cfg *c, float g, float u)
{
    int clamp = c->limit >= 0; /* a negative limit means no clamp (TRT-LLM sentinel) */
    float L = c->limit;
    switch (c->act) {
    case QC_ACT_SILU: return silu(g) * u;
    case QC_ACT_GELU: return 0.5f * g * (1.0f + qcref_erff(g * 0.70710678118654752f)) * u;
    case QC_ACT_GELU_TANH: {
        float inner = 0.79788456080286536f * (g + 0.044715f * g * g * g);
        return 0.5f * g * (1.0f + qcref_tanhf(inner)) * u;
    }
    case QC_ACT_RELU2: {
        float r = g > 0 ? g : 0.0f;
        return r * r;
    }
    case QC_ACT_SWIGLU_OAI: {
        float gc = clamp ? fminf(g, L) : g, uc = clamp ? clampf(u, -L, L) : u;
        return gc * sigmoid(c->alpha * gc) * (uc + c->beta);
    }
    default: {
        float s = silu(g);
        return (clamp ? fminf(s, L) : s) * (clamp ? clampf(u, -L, L) : u);
    }
    }
}

void qcref_act_row(const qc_act_cfg *c, const float *h, size_t inter, float *out)
{
    for (size_t j = 0; j < inter; j++) {
        float g, u;
        if (!qcref_act_gated(c->act))
            g = h[j], u = 0.0f;
        else if (c->order == QC_W13_GATE_UP)
            g = h[j], u = h[inter + j];
        else if (c->order == QC_W13_UP_GATE)
            u = h[j], g = h[inter + j];
        else
            g = h[2 * j], u = h[2 * j + 1];
        out[j] = qcref_act_pair(c, g, u);
    }
}

float qcref_moe_combine_f32(const float *w, const float *y, size_t slots, size_t stride, float rsf_out)
{
    float acc = 0.0f;
    for (size_t j = 0; j < slots; j++)
        acc = acc + w[j] * y[j * stride]; /* two fp32 roundings: libqcref is built -ffp-contract=off */
    return rsf_out * acc;
}
