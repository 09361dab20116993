/* test_latency.c — batch latency coefficients (MLPerf Inference v2.0 fits) and MLPerf SLOs. */
#include <criterion/criterion.h>

#include "models/latency.h"

Test(latency, linear_batch_model)
{
    const struct latency_model *r = latency_model_find("ResNet50", NULL);
    cr_assert_not_null(r);
    /* 0.44 ms + 0.025 ms x 32 = 1.24 ms */
    cr_expect_float_eq(latency_batch_s(r, 32), 1.24e-3, 1e-12);
    cr_expect_float_eq(latency_batch_s(r, 0), 0.465e-3, 1e-12);
    const struct latency_model *b1 = latency_model_find("bert", "1g.10gb");
    cr_assert_not_null(b1);
    /* 2.20 ms + 2.07 ms x 8 = 18.76 ms */
    cr_expect_float_eq(latency_batch_s(b1, 8), 18.76e-3, 1e-12);
    /* full GPU beats one 1g slice for every batch size */
    const struct latency_model *bf = latency_model_find("bert", "full");
    for (int b = 1; b <= 64; b *= 2)
        cr_expect_lt(latency_batch_s(bf, b), latency_batch_s(b1, b));
    cr_expect_null(latency_model_find("gpt2", NULL));
    cr_expect_null(latency_model_find("resnet50", "3g.40gb"));
    cr_expect_eq(latency_model_count(), 4);
}

Test(latency, mlperf_slos)
{
    cr_expect_float_eq(latency_slo_find("resnet50")->p99_s, 0.015, 1e-12);
    cr_expect_float_eq(latency_slo_find("BERT")->p99_s, 0.130, 1e-12);
    cr_expect_float_eq(latency_slo_find("retinanet")->p99_s, 0.100, 1e-12);
    const struct latency_slo *l = latency_slo_find("llama2-70b");
    cr_expect_float_eq(l->ttft_s, 2.0, 1e-12);
    cr_expect_float_eq(l->tpot_s, 0.2, 1e-12);
    cr_expect_null(latency_slo_find("nope"));
    for (size_t i = 0; i < latency_slo_count(); i++) {
        const struct latency_slo *s = latency_slo_at(i);
        cr_expect((s->p99_s > 0) != (s->ttft_s > 0 && s->tpot_s > 0), "%s", s->model);
    }
}
