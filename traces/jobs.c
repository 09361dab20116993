/* jobs.c — training job log adapters over csvstream, with a bounded reorder window. */
#include "traces/jobs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "traces/csvstream.h"

void job_trace_opts_init(struct job_trace_opts *o)
{
    memset(o, 0, sizeof(*o));
}

void job_csv_map_generic(struct job_csv_map *m)
{
    memset(m, 0, sizeof(*m));
    m->id_col = "id";
    m->submit_col = "submit_s";
    m->submit_unit = TFIELD_SEC;
    m->duration_col = "duration_s";
    m->duration_unit = TFIELD_SEC;
    m->gpus_col = "gpus";
    m->fraction_col = "gpu_fraction";
    m->mig_col = "mig_profile";
    m->priority_col = "priority";
    m->queue_col = "queue";
    m->params_col = "params_b";
    m->outcome_col = "outcome";
}

bool jobs_mig_profile_known(const char *name)
{
    /* NVIDIA MIG user guide, supported profiles of A100-40GB, A100-80GB and H100-80GB. */
    static const char known[][12] = {"1g.5gb",  "1g.10gb",   "1g.20gb",    "2g.10gb",   "2g.20gb",
                                     "3g.20gb", "3g.40gb",   "4g.20gb",    "4g.40gb",   "7g.40gb",
                                     "7g.80gb", "1g.5gb+me", "1g.10gb+me", "1g.20gb+me"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(name, known[i]) == 0)
            return true;
    return false;
}

const char *jobs_outcome_name(enum job_log_outcome o)
{
    switch (o) {
    case JOB_LOG_FAILED:
        return "failed";
    case JOB_LOG_CANCELLED:
        return "cancelled";
    case JOB_LOG_SERVICE:
        return "service";
    case JOB_LOG_COMPLETED:
    default:
        return "completed";
    }
}

enum jkind { J_OPENB, J_PAI, J_HELIOS, J_CSV };

/* Row result besides 0 / -EINVAL: filtered, already counted. */
#define ROW_FILTERED 2

struct jent {
    struct job_spec job;
    int64_t line;
    char text[48]; /* submit field as written */
};

struct jsrc {
    struct job_source base;
    struct job_source_ops ops; /* base.ops points here (no relocated tables) */
    enum jkind kind;
    struct csvstream *cs;
    struct job_trace_opts o;
    struct job_stats st;
    struct trace_err first;
    /* column indices (-1 = absent) */
    int c_id, c_submit, c_sched, c_end, c_dur, c_gpus, c_frac, c_mig, c_prio, c_queue, c_params,
        c_outcome, c_qos, c_phase, c_inst, c_status;
    int c_gtype; /* GPU type column (openb gpu_spec, PAI gpu_type), -1 = none */
    enum tfield_unit submit_unit, dur_unit;
    bool origin_set;
    int64_t origin;
    uint64_t rowno;
    /* reorder heap, min by (submit, line) */
    struct jent *heap;
    size_t nheap, cap;
    bool eof, done;
    bool have_last;
    struct jent last;
};

static int field_err(const struct jsrc *s, struct trace_err *e, int col, const char *expect)
{
    return csvstream_field_error(s->cs, e, (size_t)col, expect);
}

static const char *fld(const struct jsrc *s, int col)
{
    return col < 0 ? "" : csvstream_field(s->cs, (size_t)col);
}

/* "100" as text, for messages naming the time limit. */
#define LIMIT_YEARS_TEXT "100"
_Static_assert(SIM_TIME_LIMIT_YEARS == 100, "LIMIT_YEARS_TEXT names SIM_TIME_LIMIT");
#define GPU_LIMIT_TEXT "65536"
_Static_assert(JOB_MAX_GPUS == 65536, "GPU_LIMIT_TEXT names JOB_MAX_GPUS");

static int parse_time(struct jsrc *s, int col, enum tfield_unit unit, int64_t *us,
                      struct trace_err *e)
{
    if (tfield_time(fld(s, col), unit, s->o.tz_s, us) < 0)
        return field_err(s, e, col,
                         unit == TFIELD_WALL ? "a wall-clock time YYYY-MM-DD HH:MM:SS"
                                             : "a time in seconds (at most " LIMIT_YEARS_TEXT
                                               " years)");
    return 0;
}

/*
 * submit = us − origin, which must stay within ±SIM_TIME_LIMIT (a stamp
 * centuries away from the first row's day would otherwise wrap or overflow the
 * run's clock later). Returns 0 or -EINVAL with e filled.
 */
static int set_submit(struct jsrc *s, struct job_spec *j, int64_t us, struct trace_err *e)
{
    if (!s->origin_set) {
        if (s->submit_unit == TFIELD_WALL) {
            int64_t local = us + (int64_t)s->o.tz_s * SIM_SEC; /* wall stamps: |us| < 3e17 */
            int64_t day = local >= 0 ? local / SIM_DAY : -((-local + SIM_DAY - 1) / SIM_DAY);
            s->origin = day * SIM_DAY - (int64_t)s->o.tz_s * SIM_SEC;
        } else {
            s->origin = 0;
        }
        s->origin_set = true;
    }
    sim_time t;
    if (sim_time_sub_checked(us, s->origin, &t) < 0 || !sim_time_in_range(t))
        return field_err(s, e, s->c_submit,
                         "a submit time within " LIMIT_YEARS_TEXT " years of the origin");
    j->submit = t;
    return 0;
}

/* A run time of at most SIM_TIME_LIMIT, else -EINVAL naming column col. */
static int set_work(struct jsrc *s, struct job_spec *j, sim_time w, int col, struct trace_err *e)
{
    if (w > SIM_TIME_LIMIT)
        return field_err(s, e, col, "a run time of at most " LIMIT_YEARS_TEXT " years");
    j->work = w > 0 ? w : 1;
    return 0;
}

/* total GPUs in [JOB_MIN_FRACTION, JOB_MAX_GPUS] (checked by the caller). */
static void set_gpus_total(struct job_spec *j, double total)
{
    if (total < 1.0) {
        j->gpus = 1;
        j->gpu_fraction = total;
    } else {
        j->gpus = (uint32_t)ceil(total - 1e-9);
        j->gpu_fraction = 1.0;
    }
}

static int row_openb(struct jsrc *s, struct job_spec *j, struct trace_err *e)
{
    int64_t ngpu, milli, created, sched, del;
    if (tfield_i64(fld(s, s->c_gpus), &ngpu) < 0 || ngpu < 0 || ngpu > 1024)
        return field_err(s, e, s->c_gpus, "a GPU count 0..1024");
    if (ngpu == 0) {
        s->st.cpu_only++;
        return ROW_FILTERED;
    }
    if (tfield_i64(fld(s, s->c_frac), &milli) < 0 || milli < 1 || milli > 1000)
        return field_err(s, e, s->c_frac, "a per-GPU share in milli-GPU, 1..1000");
    if (ngpu > 1 && milli != 1000)
        return field_err(s, e, s->c_frac, "1000 (whole GPUs) when num_gpu > 1");
    if (parse_time(s, s->c_submit, TFIELD_SEC, &created, e) < 0)
        return -EINVAL;
    const char *ph = fld(s, s->c_phase);
    if (*fld(s, s->c_sched) == '\0' || strcmp(ph, "Pending") == 0) {
        s->st.never_ran++;
        return ROW_FILTERED;
    }
    if (parse_time(s, s->c_sched, TFIELD_SEC, &sched, e) < 0 ||
        parse_time(s, s->c_end, TFIELD_SEC, &del, e) < 0)
        return -EINVAL;
    if (del < sched) {
        char want[96];
        snprintf(want, sizeof(want), "a deletion time >= scheduled_time %s (negative duration)",
                 fld(s, s->c_sched));
        return field_err(s, e, s->c_end, want);
    }
    const char *qos = fld(s, s->c_qos);
    if (strcmp(qos, "LS") && strcmp(qos, "BE") && strcmp(qos, "Burstable") &&
        strcmp(qos, "Guaranteed"))
        return field_err(s, e, s->c_qos, "LS, BE, Burstable or Guaranteed");
    if (strcmp(ph, "Running") == 0 || strcmp(ph, "Succeeded") == 0)
        j->outcome = JOB_LOG_COMPLETED;
    else if (strcmp(ph, "Failed") == 0)
        j->outcome = JOB_LOG_FAILED;
    else
        return field_err(s, e, s->c_phase, "Running, Succeeded, Failed or Pending");
    if (strcmp(qos, "LS") == 0) {
        j->outcome = JOB_LOG_SERVICE;
        j->priority = 1;
    }
    snprintf(j->queue, sizeof(j->queue), "%s", qos);
    j->gpus = (uint32_t)ngpu;
    j->gpu_fraction = milli < 1000 ? (double)milli / 1000.0 : 1.0;
    if (set_submit(s, j, created, e) < 0 || set_work(s, j, del - sched, s->c_end, e) < 0)
        return -EINVAL;
    const char *name = fld(s, s->c_id), *dash = strrchr(name, '-');
    int64_t id;
    j->id = dash && tfield_i64(dash + 1, &id) == 0 && id >= 0 ? (uint64_t)id : s->rowno;
    return 0;
}

static int row_pai(struct jsrc *s, struct job_spec *j, struct trace_err *e)
{
    double inst, plan, st, en;
    const char *status = fld(s, s->c_status);
    bool ran = strcmp(status, "Terminated") == 0 || strcmp(status, "Failed") == 0;
    if (!ran && strcmp(status, "Running") && strcmp(status, "Waiting"))
        return field_err(s, e, s->c_status, "Terminated, Failed, Running or Waiting");
    const char *pg = fld(s, s->c_gpus);
    if (*pg == '\0') {
        plan = 0;
    } else if (tfield_f64(pg, &plan) < 0 || plan < 0 || plan > 100.0 * JOB_MAX_GPUS) {
        return field_err(s, e, s->c_gpus,
                         "a GPU request in percent of a GPU, 0.." GPU_LIMIT_TEXT "00");
    }
    if (tfield_f64(fld(s, s->c_inst), &inst) < 0 || inst < 1 || inst > 1e6)
        return field_err(s, e, s->c_inst, "an instance count 1..1000000");
    if (plan == 0) {
        s->st.cpu_only++;
        return ROW_FILTERED;
    }
    if (!ran) {
        s->st.never_ran++;
        return ROW_FILTERED;
    }
    if (tfield_f64(fld(s, s->c_submit), &st) < 0 || st < 0 || st > SIM_TIME_LIMIT_SEC)
        return field_err(s, e, s->c_submit, "a time in seconds, 0.." LIMIT_YEARS_TEXT " years");
    if (tfield_f64(fld(s, s->c_end), &en) < 0 || en > SIM_TIME_LIMIT_SEC)
        return field_err(s, e, s->c_end, "a time in seconds, at most " LIMIT_YEARS_TEXT " years");
    if (en < st) {
        char want[96];
        snprintf(want, sizeof(want), "an end time >= start_time %s (negative duration)",
                 fld(s, s->c_submit));
        return field_err(s, e, s->c_end, want);
    }
    /* plan_gpu is percent of one GPU per instance (PAI README: 50 = half a GPU). */
    double total = inst * plan / 100.0;
    if (!(total >= JOB_MIN_FRACTION && total <= JOB_MAX_GPUS))
        return field_err(s, e, s->c_gpus,
                         "a request of 0.001.." GPU_LIMIT_TEXT " GPUs in all (inst_num x "
                         "plan_gpu / 100)");
    set_gpus_total(j, total);
    j->outcome = strcmp(status, "Failed") == 0 ? JOB_LOG_FAILED : JOB_LOG_COMPLETED;
    if (set_submit(s, j, sim_time_from_sec(st), e) < 0 ||
        set_work(s, j, sim_time_from_sec(en - st), s->c_end, e) < 0)
        return -EINVAL;
    snprintf(j->queue, sizeof(j->queue), "%s", fld(s, s->c_queue));
    j->id = s->rowno;
    return 0;
}

static int row_helios(struct jsrc *s, struct job_spec *j, struct trace_err *e)
{
    int64_t ngpu, dur, sub;
    if (tfield_i64(fld(s, s->c_gpus), &ngpu) < 0 || ngpu < 0 || ngpu > JOB_MAX_GPUS)
        return field_err(s, e, s->c_gpus, "a GPU count 0.." GPU_LIMIT_TEXT);
    const char *state = fld(s, s->c_status);
    if (strcmp(state, "COMPLETED") == 0)
        j->outcome = JOB_LOG_COMPLETED;
    else if (strcmp(state, "CANCELLED") == 0)
        j->outcome = JOB_LOG_CANCELLED;
    else if (strcmp(state, "FAILED") == 0 || strcmp(state, "TIMEOUT") == 0 ||
             strcmp(state, "NODE_FAIL") == 0 || strcmp(state, "OUT_OF_MEMORY") == 0)
        j->outcome = JOB_LOG_FAILED;
    else
        return field_err(s, e, s->c_status,
                         "COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL or OUT_OF_MEMORY");
    if (parse_time(s, s->c_submit, TFIELD_WALL, &sub, e) < 0)
        return -EINVAL;
    if (tfield_i64(fld(s, s->c_dur), &dur) < 0)
        return field_err(s, e, s->c_dur, "a duration in seconds");
    if (dur < 0)
        return field_err(s, e, s->c_dur, "a non-negative duration in seconds");
    if (dur > SIM_TIME_LIMIT / SIM_SEC)
        return field_err(s, e, s->c_dur,
                         "a duration in seconds of at most " LIMIT_YEARS_TEXT " years");
    if (ngpu == 0) {
        s->st.cpu_only++;
        return ROW_FILTERED;
    }
    if (dur == 0) {
        s->st.never_ran++;
        return ROW_FILTERED;
    }
    j->gpus = (uint32_t)ngpu;
    j->gpu_fraction = 1.0;
    j->work = dur * SIM_SEC; /* dur <= SIM_TIME_LIMIT / SIM_SEC: no overflow */
    if (set_submit(s, j, sub, e) < 0)
        return -EINVAL;
    snprintf(j->queue, sizeof(j->queue), "%s", fld(s, s->c_queue));
    int64_t id;
    j->id = tfield_i64(fld(s, s->c_id), &id) == 0 && id >= 0 ? (uint64_t)id : s->rowno;
    return 0;
}

static int row_csv(struct jsrc *s, struct job_spec *j, struct trace_err *e)
{
    int64_t sub, dur, iv;
    double dv;
    if (parse_time(s, s->c_submit, s->submit_unit, &sub, e) < 0)
        return -EINVAL;
    if (tfield_time(fld(s, s->c_dur), s->dur_unit, 0, &dur) < 0)
        return field_err(s, e, s->c_dur, "a duration (at most " LIMIT_YEARS_TEXT " years)");
    if (dur < 0)
        return field_err(s, e, s->c_dur, "a non-negative duration");
    j->gpus = 0;
    j->gpu_fraction = 1.0;
    const char *mig = fld(s, s->c_mig);
    const char *fr = fld(s, s->c_frac);
    const char *gp = fld(s, s->c_gpus);
    if (*mig) {
        if (!jobs_mig_profile_known(mig))
            return field_err(s, e, s->c_mig,
                             "a MIG profile (1g.5gb 1g.10gb 1g.20gb 2g.10gb 2g.20gb 3g.20gb "
                             "3g.40gb 4g.20gb 4g.40gb 7g.40gb 7g.80gb, 1g.*+me)");
        snprintf(j->mig_profile, sizeof(j->mig_profile), "%s", mig);
        j->gpus = 1;
        j->gpu_fraction = (double)(mig[0] - '0') / 7.0; /* compute slices of 7 */
    } else if (*fr && !(tfield_f64(fr, &dv) == 0 && dv == 1.0 && *gp)) {
        if (tfield_f64(fr, &dv) < 0 || !(dv >= JOB_MIN_FRACTION) || dv > 1)
            return field_err(s, e, s->c_frac, "a GPU fraction in [0.001, 1]");
        j->gpus = 1;
        j->gpu_fraction = dv;
    } else {
        if (tfield_i64(gp, &iv) < 0 || iv < 0 || iv > JOB_MAX_GPUS)
            return field_err(s, e, s->c_gpus, "a GPU count 1.." GPU_LIMIT_TEXT);
        if (iv == 0)
            return field_err(s, e, s->c_gpus, "a positive GPU count (a training job needs a GPU)");
        j->gpus = (uint32_t)iv;
    }
    if (s->c_prio >= 0 && *fld(s, s->c_prio)) {
        if (tfield_i64(fld(s, s->c_prio), &iv) < 0 || iv < INT32_MIN || iv > INT32_MAX)
            return field_err(s, e, s->c_prio, "an integer priority");
        j->priority = (int32_t)iv;
    }
    if (s->c_params >= 0 && *fld(s, s->c_params)) {
        if (tfield_f64(fld(s, s->c_params), &dv) < 0 || dv < 0 || dv > JOB_MAX_PARAMS_B)
            return field_err(s, e, s->c_params,
                             "a model size in billions of parameters, 0..1000000");
        j->params_b = dv;
    }
    const char *oc = fld(s, s->c_outcome);
    if (*oc == '\0' || strcasecmp(oc, "completed") == 0)
        j->outcome = JOB_LOG_COMPLETED;
    else if (strcasecmp(oc, "failed") == 0)
        j->outcome = JOB_LOG_FAILED;
    else if (strcasecmp(oc, "cancelled") == 0)
        j->outcome = JOB_LOG_CANCELLED;
    else if (strcasecmp(oc, "service") == 0)
        j->outcome = JOB_LOG_SERVICE;
    else
        return field_err(s, e, s->c_outcome, "completed, failed, cancelled or service");
    snprintf(j->queue, sizeof(j->queue), "%s", fld(s, s->c_queue));
    if (set_submit(s, j, sub, e) < 0 || set_work(s, j, dur, s->c_dur, e) < 0)
        return -EINVAL;
    j->id =
        s->c_id >= 0 && tfield_i64(fld(s, s->c_id), &iv) == 0 && iv >= 0 ? (uint64_t)iv : s->rowno;
    return 0;
}

static bool jent_less(const struct jent *a, const struct jent *b)
{
    return a->job.submit < b->job.submit || (a->job.submit == b->job.submit && a->line < b->line);
}

static void heap_push(struct jsrc *s, const struct jent *x)
{
    size_t i = s->nheap++;
    s->heap[i] = *x;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!jent_less(&s->heap[i], &s->heap[p]))
            break;
        struct jent t = s->heap[i];
        s->heap[i] = s->heap[p];
        s->heap[p] = t;
        i = p;
    }
}

static void heap_pop(struct jsrc *s, struct jent *out)
{
    *out = s->heap[0];
    s->heap[0] = s->heap[--s->nheap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, b = i;
        if (l < s->nheap && jent_less(&s->heap[l], &s->heap[b]))
            b = l;
        if (r < s->nheap && jent_less(&s->heap[r], &s->heap[b]))
            b = r;
        if (b == i)
            return;
        struct jent t = s->heap[i];
        s->heap[i] = s->heap[b];
        s->heap[b] = t;
        i = b;
    }
}

/* Read rows until one job is parsed: 0, 1 at end, negative on error. */
static int read_one(struct jsrc *s, struct jent *x, struct trace_err *err)
{
    for (;;) {
        int rc = csvstream_next(s->cs, err);
        if (rc != 0)
            return rc;
        s->st.rows++;
        s->rowno++;
        memset(x, 0, sizeof(*x));
        struct trace_err e;
        switch (s->kind) {
        case J_OPENB:
            rc = row_openb(s, &x->job, &e);
            break;
        case J_PAI:
            rc = row_pai(s, &x->job, &e);
            break;
        case J_HELIOS:
            rc = row_helios(s, &x->job, &e);
            break;
        case J_CSV:
        default:
            rc = row_csv(s, &x->job, &e);
            break;
        }
        if (rc == 0 && (sim_time_add_checked(x->job.submit, s->o.offset, &x->job.submit) < 0 ||
                        !sim_time_in_range(x->job.submit)))
            rc = field_err(s, &e, s->c_submit,
                           "a submit time within " LIMIT_YEARS_TEXT
                           " years of t = 0 once the offset is added");
        if (rc == ROW_FILTERED)
            continue;
        if (rc < 0) {
            if (s->o.skip_bad) {
                if (s->st.skipped++ == 0)
                    s->first = e;
                continue;
            }
            *err = e;
            return rc;
        }
        x->line = csvstream_line(s->cs);
        x->job.line = x->line;
        snprintf(x->job.gpu_type, sizeof(x->job.gpu_type), "%s", fld(s, s->c_gtype));
        snprintf(x->text, sizeof(x->text), "%.40s", fld(s, s->c_submit));
        return 0;
    }
}

static int jsrc_next(struct job_source *src, struct job_spec *out, struct trace_err *err)
{
    struct jsrc *s = (struct jsrc *)src;
    for (;;) {
        if (s->done)
            return 1;
        while (!s->eof && s->nheap < s->cap) {
            struct jent x;
            int rc = read_one(s, &x, err);
            if (rc < 0)
                return rc;
            if (rc == 1) {
                s->eof = true;
                break;
            }
            heap_push(s, &x);
        }
        if (s->nheap == 0) {
            s->done = true;
            return 1;
        }
        struct jent x;
        heap_pop(s, &x);
        if (s->have_last && x.job.submit < s->last.job.submit) {
            snprintf(err->msg, sizeof(err->msg),
                     "%s:%lld: column '%s': submit time goes backwards ('%s' after '%s' at line "
                     "%lld)",
                     csvstream_path(s->cs), (long long)x.line,
                     csvstream_colname(s->cs, (size_t)s->c_submit), x.text, s->last.text,
                     (long long)s->last.line);
            if (s->o.skip_bad) {
                if (s->st.skipped++ == 0)
                    s->first = *err;
                continue;
            }
            s->done = true;
            return -EINVAL;
        }
        s->have_last = true;
        s->last = x;
        if (x.job.submit < s->o.clip_start) {
            s->st.clipped++;
            continue;
        }
        if (s->o.clip_end > 0 && x.job.submit >= s->o.clip_end) {
            s->done = true;
            return 1;
        }
        *out = x.job;
        s->st.emitted++;
        return 0;
    }
}

static void jsrc_destroy(struct job_source *src)
{
    struct jsrc *s = (struct jsrc *)src;
    if (!s)
        return;
    csvstream_destroy(s->cs);
    free(s->heap);
    free(s);
}

static int col(struct jsrc *s, const char *name, bool required, struct trace_err *err)
{
    if (!name)
        return -1;
    int c = csvstream_col(s->cs, name);
    if (c < 0 && required)
        snprintf(err->msg, sizeof(err->msg), "%s:1: missing column '%s'", csvstream_path(s->cs),
                 name);
    return c;
}

static struct jsrc *jsrc_open(const char *path, enum jkind kind, const char *columns,
                              const struct job_trace_opts *o, struct trace_err *err)
{
    struct jsrc *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        return NULL;
    }
    s->ops = (struct job_source_ops){jsrc_next, jsrc_destroy};
    s->base.ops = &s->ops;
    s->kind = kind;
    if (o)
        s->o = *o;
    if (s->o.reorder_window > 10000000) {
        snprintf(err->msg, sizeof(err->msg), "%s: reorder window %zu is too large (max 1e7)", path,
                 s->o.reorder_window);
        free(s);
        return NULL;
    }
    if (!sim_time_in_range(s->o.offset) || !sim_time_in_range(s->o.clip_start) ||
        !sim_time_in_range(s->o.clip_end)) {
        snprintf(err->msg, sizeof(err->msg),
                 "%s: offset and clip times must be within " LIMIT_YEARS_TEXT " years", path);
        free(s);
        return NULL;
    }
    s->cap = s->o.reorder_window + 1;
    s->heap = calloc(s->cap, sizeof(*s->heap));
    struct csvstream_opts co = {.header = columns == NULL, .columns = columns};
    if (!s->heap) {
        snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
        jsrc_destroy(&s->base);
        return NULL;
    }
    s->cs = csvstream_open(path, &co, err);
    if (!s->cs) {
        jsrc_destroy(&s->base);
        return NULL;
    }
    s->c_id = s->c_submit = s->c_sched = s->c_end = s->c_dur = s->c_gpus = s->c_frac = -1;
    s->c_mig = s->c_prio = s->c_queue = s->c_params = s->c_outcome = s->c_qos = -1;
    s->c_gtype = -1;
    s->c_phase = s->c_inst = s->c_status = -1;
    return s;
}

static struct job_source *jsrc_finish(struct jsrc *s, bool ok, int unit, struct trace_err *err)
{
    if (!ok) {
        jsrc_destroy(&s->base);
        return NULL;
    }
    s->submit_unit = (enum tfield_unit)unit;
    if (s->o.origin && *s->o.origin) {
        if (tfield_time(s->o.origin, s->submit_unit, s->o.tz_s, &s->origin) < 0) {
            snprintf(err->msg, sizeof(err->msg),
                     "origin: expected a time like the submit "
                     "column, got '%.60s'",
                     s->o.origin);
            jsrc_destroy(&s->base);
            return NULL;
        }
        s->origin_set = true;
    }
    return &s->base;
}

struct job_source *jobs_openb_create(const char *path, const struct job_trace_opts *o,
                                     struct trace_err *err)
{
    struct jsrc *s = jsrc_open(path, J_OPENB, NULL, o, err);
    if (!s)
        return NULL;
    bool ok = (s->c_id = col(s, "name", true, err)) >= 0 &&
              (s->c_gpus = col(s, "num_gpu", true, err)) >= 0 &&
              (s->c_frac = col(s, "gpu_milli", true, err)) >= 0 &&
              (s->c_qos = col(s, "qos", true, err)) >= 0 &&
              (s->c_phase = col(s, "pod_phase", true, err)) >= 0 &&
              (s->c_submit = col(s, "creation_time", true, err)) >= 0 &&
              (s->c_sched = col(s, "scheduled_time", true, err)) >= 0 &&
              (s->c_end = col(s, "deletion_time", true, err)) >= 0;
    if (ok)
        s->c_gtype = col(s, "gpu_spec", false, err);
    return jsrc_finish(s, ok, TFIELD_SEC, err);
}

struct job_source *jobs_pai_task_create(const char *path, const struct job_trace_opts *o,
                                        struct trace_err *err)
{
    /* Column list of pai_task_table.header (cluster-trace-gpu-v2020). */
    struct jsrc *s = jsrc_open(path, J_PAI,
                               "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,"
                               "plan_mem,plan_gpu,gpu_type",
                               o, err);
    if (!s)
        return NULL;
    s->c_id = 0;
    s->c_inst = 2;
    s->c_status = 3;
    s->c_submit = 4;
    s->c_end = 5;
    s->c_gpus = 8;
    s->c_queue = 9;
    s->c_gtype = 9;
    return jsrc_finish(s, true, TFIELD_SEC, err);
}

struct job_source *jobs_helios_create(const char *path, const struct job_trace_opts *o,
                                      struct trace_err *err)
{
    struct jsrc *s = jsrc_open(path, J_HELIOS, NULL, o, err);
    if (!s)
        return NULL;
    bool ok = (s->c_id = col(s, "job_id", true, err)) >= 0 &&
              (s->c_gpus = col(s, "gpu_num", true, err)) >= 0 &&
              (s->c_status = col(s, "state", true, err)) >= 0 &&
              (s->c_submit = col(s, "submit_time", true, err)) >= 0 &&
              (s->c_dur = col(s, "duration", true, err)) >= 0;
    if (ok)
        s->c_queue = col(s, "vc", false, err);
    return jsrc_finish(s, ok, TFIELD_WALL, err);
}

struct job_source *jobs_csv_create(const char *path, const struct job_csv_map *m,
                                   const struct job_trace_opts *o, struct trace_err *err)
{
    if (m->duration_unit == TFIELD_WALL) {
        snprintf(err->msg, sizeof(err->msg), "%s: duration unit must be s, ms or us", path);
        return NULL;
    }
    struct jsrc *s = jsrc_open(path, J_CSV, NULL, o, err);
    if (!s)
        return NULL;
    bool ok = (s->c_submit = col(s, m->submit_col, true, err)) >= 0 &&
              (s->c_dur = col(s, m->duration_col, true, err)) >= 0;
    if (ok) {
        s->c_id = col(s, m->id_col, false, err);
        s->c_gpus = col(s, m->gpus_col, false, err);
        s->c_frac = col(s, m->fraction_col, false, err);
        s->c_mig = col(s, m->mig_col, false, err);
        s->c_prio = col(s, m->priority_col, false, err);
        s->c_queue = col(s, m->queue_col, false, err);
        s->c_params = col(s, m->params_col, false, err);
        s->c_outcome = col(s, m->outcome_col, false, err);
        if (s->c_gpus < 0 && s->c_frac < 0 && s->c_mig < 0) {
            snprintf(err->msg, sizeof(err->msg),
                     "%s:1: missing column: one of '%s', '%s' or '%s' is needed", path,
                     m->gpus_col ? m->gpus_col : "gpus",
                     m->fraction_col ? m->fraction_col : "gpu_fraction",
                     m->mig_col ? m->mig_col : "mig_profile");
            ok = false;
        }
    }
    s->dur_unit = m->duration_unit;
    return jsrc_finish(s, ok, (int)m->submit_unit, err);
}

void jobs_stats(const struct job_source *src, struct job_stats *st)
{
    memset(st, 0, sizeof(*st));
    if (src && src->ops->next == jsrc_next)
        *st = ((const struct jsrc *)src)->st;
}

const char *jobs_first_skip(const struct job_source *src)
{
    if (src && src->ops->next == jsrc_next) {
        const struct jsrc *s = (const struct jsrc *)src;
        return s->st.skipped ? s->first.msg : "";
    }
    return "";
}
