"""check_schema.py FILE [REPLICATED] — read a tidesim results file with h5py and check
the datasets and attributes documented in docs/results.md: presence, shapes, units.
Prints one line per problem and exits 1 if any, else prints 'schema ok' and exits 0."""
import sys

import h5py
import numpy as np

problems = []


def need(cond, msg):
    if not cond:
        problems.append(msg)


META = {"schema_version": int, "tidesim_version": str, "git_commit": str, "scenario": str,
        "scenario_name": str, "seed": int, "policy": str, "gpu": str, "sharing": str,
        "complete": int, "sim_time_reached_s": float, "duration_s": float,
        "sample_interval_s": float, "events_processed": int, "wall_start": str,
        "wall_end": str, "wall_seconds": float, "host": str}
SUMMARY = ["duration_s", "gpus", "gpu_hours", "util_allocated", "util_busy",
           "requests_arrived", "requests_served", "requests_dropped", "slo_share",
           "slo_share_worst_service", "p99_ms_worst_service", "jobs_submitted",
           "jobs_completed", "jobs_running", "jobs_queued", "jobs_rejected",
           "training_gpu_hours", "queue_delay_mean_s", "completion_mean_s",
           "util_useful", "checkpoint_overhead", "energy_kwh", "power_mean_w", "faults",
           "fault_victims", "oom_kills", "requests_failed", "jobs_failed", "preemptions",
           "restarts", "training_gpu_hours_failed_in_log", "jobs_failed_in_log",
           "jobs_cancelled_in_log", "jobs_services_in_log", "job_log_services_skipped",
           "job_log_rows_skipped", "job_log_rows_filtered", "queue_delay_p50_s",
           "queue_delay_p95_s", "completion_p50_s", "completion_p95_s",
           "share_fragmented", "gpus_fragmented_mean"]
STATES = ["training", "inference", "checkpoint", "restore", "recompute", "overhead",
          "reconfiguring", "idle"]
SUMMARY += ["gpu_hours_" + k for k in STATES]
TS = {"time_s": "s", "util_allocated": "1", "util_busy": "1", "gpus_inference": "GPUs",
      "gpus_training": "GPUs", "jobs_running": "jobs", "jobs_queued": "jobs",
      "util_useful": "1", "share_free": "1", "checkpoint_gpu_s": "GPU*s", "power_w": "W",
      "gpus_fragmented": "GPUs"}
SVC_TS = {"time_s": "s", "arrived": "requests", "rate_rps": "req/s", "served": "requests",
          "dropped": "requests", "queue_len": "requests", "replicas": "replicas",
          "mean_ms": "ms", "p50_ms": "ms", "p95_ms": "ms", "p99_ms": "ms", "max_ms": "ms",
          "slo_share": "1", "capacity_rps": "req/s",
          "within_slo": "requests", "failed": "requests"}
SVC_ATTRS = ["arrived", "served", "dropped", "waiting", "in_service", "batches", "mean_ms",
             "p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_wait_ms", "slo_ms", "slo_quantile",
             "slo_quantile_ms", "slo_share", "slo_met", "failed", "trace_rows_skipped",
             "wait_p50_ms", "wait_p95_ms", "wait_p99_ms", "wait_max_ms", "headroom_min",
             "headroom_peak"]
JOBS = {"id": "1", "submit_s": "s", "start_s": "s", "end_s": "s", "gpus": "GPUs",
        "work_s": "s", "done_s": "s", "queue_delay_s": "s", "completion_s": "s",
        "preemptions": "1", "restarts": "1", "checkpoints": "1", "checkpoint_save_s": "s",
        "checkpoint_restore_s": "s", "lost_s": "s", "queued_total_s": "s"}
GPUS = {"node": "index", "allocated_s": "s", "busy_s": "s", "useful_s": "s", "free_s": "s"}
TS.update({"share_" + k: "1" for k in STATES})
GPUS.update({k + "_s": "s" for k in STATES})


def units(ds):
    u = ds.attrs.get("units")
    return u.decode() if isinstance(u, bytes) else u


def columns(g, spec, where, length=None):
    n = length
    for name, unit in spec.items():
        if name not in g:
            problems.append(f"{where}/{name}: missing")
            continue
        ds = g[name]
        need(ds.ndim == 1, f"{where}/{name}: expected 1-D, got shape {ds.shape}")
        need(units(ds) == unit, f"{where}/{name}: units {units(ds)!r}, expected {unit!r}")
        need(ds.chunks is not None and ds.compression == "gzip",
             f"{where}/{name}: not chunked and deflate-compressed")
        if n is None:
            n = ds.shape[0]
        need(ds.shape[0] == n, f"{where}/{name}: length {ds.shape[0]}, expected {n}")
    return n


def check_run(r, where):
    meta = r["meta"].attrs
    for k, t in META.items():
        if k not in meta:
            problems.append(f"{where}/meta: attribute {k} missing")
            continue
        v = meta[k]
        if t is str:
            need(isinstance(v, (str, bytes)), f"{where}/meta/{k}: expected a string")
        elif t is int:
            need(np.issubdtype(np.asarray(v).dtype, np.integer), f"{where}/meta/{k}: not int")
        else:
            need(np.issubdtype(np.asarray(v).dtype, np.floating), f"{where}/meta/{k}: not float")
    need(meta.get("schema_version") == 2, f"{where}/meta/schema_version != 2")
    s = r["summary"].attrs
    for k in SUMMARY:
        need(k in s, f"{where}/summary: attribute {k} missing")
    # Schema 2: every numeric figure has "<key>.unit" and "<key>.label" beside it.
    groups = [("summary", s)] + [("services/" + n, v.attrs) for n, v in r["services"].items()]
    for gname, attrs in groups:
        for k in attrs:
            if "." in k or isinstance(attrs[k], (str, bytes)):
                continue
            for c in (".unit", ".label"):
                need(k + c in attrs, f"{where}/{gname}: {k}{c} missing")
    need(0 <= s["util_busy"] <= s["util_allocated"] <= 1, f"{where}/summary: utilisation order")
    n = columns(r["timeseries"], TS, where + "/timeseries")
    need(n == round(meta["duration_s"] / meta["sample_interval_s"]),
         f"{where}/timeseries: {n} rows for duration/sample_interval")
    for name, svc in r["services"].items():
        for k in SVC_ATTRS:
            need(k in svc.attrs, f"{where}/services/{name}: attribute {k} missing")
        a = svc.attrs
        need(a["arrived"] == a["served"] + a["dropped"] + a["failed"] + a["waiting"] +
             a["in_service"],
             f"{where}/services/{name}: arrived != served + dropped + failed + waiting + "
             "in_service")
        columns(svc["timeseries"], SVC_TS, f"{where}/services/{name}/timeseries", n)
        h = svc["histogram"]
        m = columns(h, {"count": "requests", "lo_us": "us", "hi_us": "us"},
                    f"{where}/services/{name}/histogram")
        need(int(h["count"][:].sum()) == a["served"] + a["in_service"] or
             int(h["count"][:].sum()) == a["served"],
             f"{where}/services/{name}/histogram: counts do not add up to served")
        need(np.all(h["lo_us"][:] < h["hi_us"][:]), f"{where}/services/{name}: lo_us >= hi_us")
        columns(svc["interval_histogram"], {"interval": "index", "bucket": "index",
                                            "count": "requests"},
                f"{where}/services/{name}/interval_histogram")
    nj = columns(r["jobs"], JOBS, where + "/jobs")
    need(nj == s["jobs_submitted"], f"{where}/jobs: {nj} rows, {s['jobs_submitted']} submitted")
    need(units(r["jobs/state"]) is not None, f"{where}/jobs/state: no units/legend")
    need(units(r["jobs/log_outcome"]) is not None, f"{where}/jobs/log_outcome: no units/legend")
    ts = r["timeseries"]
    total = sum(ts["share_" + k][:] for k in STATES) + ts["share_free"][:]
    need(np.allclose(total, 1, atol=1e-6), f"{where}/timeseries: share_* do not sum to 1")
    g = columns(r["gpus"], GPUS, where + "/gpus")
    need(g == s["gpus"], f"{where}/gpus: {g} cards, summary says {s['gpus']}")
    cards = sum(r["gpus"][k + "_s"][:] for k in STATES) + r["gpus"]["free_s"][:]
    need(np.allclose(cards, s["duration_s"], rtol=1e-9, atol=1e-3),
         f"{where}/gpus: <state>_s + free_s != duration_s")
    for k in ("allocated_by_interval", "busy_by_interval", "useful_by_interval"):
        if k in r["gpus"]:
            need(r["gpus"][k].shape == (n, g), f"{where}/gpus/{k}: shape {r['gpus'][k].shape}")
            need(units(r["gpus"][k]) == "1", f"{where}/gpus/{k}: units")


with h5py.File(sys.argv[1], "r") as f:
    if len(sys.argv) > 2:
        reps = int(sys.argv[2])
        need(f["meta"].attrs.get("replications") == reps, "/meta/replications")
        for i in range(reps):
            check_run(f[f"rep{i:04d}"], f"/rep{i:04d}")
        s = f["summary"].attrs
        for k in SUMMARY:
            for suffix in ("_mean", "_ci95", "_sd", "_n"):
                need(k + suffix in s, f"/summary: attribute {k}{suffix} missing")
        need(s["replications"] == reps, "/summary/replications")
    else:
        check_run(f, "")

for p in problems:
    print(p)
print("schema ok" if not problems else f"{len(problems)} problems")
sys.exit(1 if problems else 0)
