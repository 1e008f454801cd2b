"""profiles/slurm: the workflow on a real one-node SLURM cluster (munged, slurmctld, slurmd on localhost).

The cluster test needs root and the Debian packages slurm-wlm and munge (.ci/run installs them); where
they are missing it is skipped, loudly. Deselect it with `pytest -m "not slurm"`. Everything the cluster
needs (slurm.conf, munge key and socket, state, logs, the workflow's directories) lives under pytest's
tmp_path, and every daemon it starts is stopped by its PID at teardown.
"""

import copy
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml

from test_workflow import ROOT, SNAKEMAKE, TINY

PROFILE = ROOT / "profiles" / "slurm"
PARTITION = "dentest"  # the test cluster's site partition; its default partition is another one
PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "squeue", "scancel", "sinfo")
DAEMON_LOGS = ("munged", "slurmctld", "slurmd")
STEP_S = 600  # bound of the SLURM run; the local reference run gets the same


def small_config():
    """TINY cut down to one experiment that still runs every rule of the workflow once or twice:
    datasets, the CNN zoo (images, shards, simulated task), pre-training, evaluation, table, figure."""
    config = copy.deepcopy(TINY)
    experiment = {**config["experiments"]["keypoints"], "sweep": {"n_keypoints": [3]}, "methods": ["den"]}
    config["experiments"] = {"keypoints": experiment}
    config["datasets"] = {name: config["datasets"][name] for name in experiment["datasets"]}
    config["cnn_zoo"]["cutoffs"] = config["cnn_zoo"]["cutoffs"][:1]
    return config


def declared_resources():
    """rule -> (threads, mem_mb, runtime) as the rules in workflow/rules/*.smk declare them."""
    text = "\n".join(p.read_text() for p in sorted((ROOT / "workflow" / "rules").glob("*.smk")))
    rules = {}
    for name, body in re.findall(r"^rule (\w+):\n(.*?)(?=^\S|\Z)", text, re.M | re.S):
        found = [re.search(pattern, body, re.M) for pattern in
                 (r"^\s+threads: (\d+)$", r"^\s+mem_mb=(\d+),", r"^\s+runtime=(\d+),")]
        assert all(found), f"rule {name}: threads, mem_mb and runtime should be plain numbers"
        rules[name] = tuple(int(match.group(1)) for match in found)
    for parent, name in re.findall(r"^use rule (\w+) as (\w+) with:", text, re.M):
        rules[name] = rules[parent]  # a rule of its own name for set-resources, the parent's values
    return rules


def local_rules():
    block = re.search(r"^localrules:\n((?:[ \t]+\w+,?\n)+)", (ROOT / "Snakefile").read_text(), re.M)
    assert block, "the Snakefile should declare localrules"
    return set(re.findall(r"\w+", block.group(1)))


def cluster_rules():
    return set(declared_resources()) - local_rules()


# Rules the small config (and rule all) never runs: shipped_model builds the package's model from
# config/corpus.yaml's `shipped` section, asked for by its file (make shipped-model);
# pretrain_member pre-trains the further seeds of pretrain.seeds > 1; model_copy writes an
# experiment's model under its own name when asked for.
NOT_IN_ALL = {"shipped_model", "pretrain_member", "model_copy"}


def site_block(uncomment_gpu=False):
    """The commented set-resources block of profiles/slurm, as a user uncomments it."""
    lines = (PROFILE / "config.yaml").read_text().splitlines()
    start = lines.index("# set-resources:")
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("# ")), len(lines))
    block = [line[2:] for line in lines[start:end]]
    if uncomment_gpu:
        block = [re.sub(r"^(\s+)# ", r"\1", line) for line in block]
    return yaml.safe_load("\n".join(block))


def profile_groups():
    """profiles/slurm's groups: group -> (its rules, jobs per group job)."""
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    rules = {}
    for item in profile.get("groups", []):
        rule, group = item.split("=")
        rules.setdefault(group, set()).add(rule)
    size = dict(item.split("=") for item in profile.get("group-components", []))
    return {group: (members, int(size.get(group, 1))) for group, members in rules.items()}


def group_request(jobs, threads, mem_mb, runtime, cores):
    """What Snakemake asks SLURM for a group job of ``jobs`` alike independent jobs: as many side
    by side as ``cores`` allows (their CPUs and memory add up), the rest in further rounds (their
    runtimes add up)."""
    width = max(1, min(jobs, cores // threads))
    return width * threads, width * mem_mb, -(-jobs // width) * runtime


def snakemake(workdir, *args):
    return [SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "--directory", str(workdir), *args]


def write_workdir(path, config):
    (path / "config").mkdir(parents=True)
    (path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return path


# --- the profile itself (no cluster needed) ---------------------------------------------------------


def test_profile_uses_the_slurm_executor_and_its_site_block_names_every_cluster_rule():
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    assert profile["executor"] == "slurm" and profile["jobs"] >= 1
    assert {"table", "figure"} <= local_rules()
    site = site_block()["set-resources"]
    assert set(site) == cluster_rules()  # no stale rule names, none missing
    assert all(set(values) == {"slurm_account", "slurm_partition"} for values in site.values())
    # the many small evaluations go to SLURM in batches; nothing caps another rule's memory
    assert profile_groups() == {"evaluations": ({"evaluate"}, 20)} and "resources" not in profile
    gpu = site_block(uncomment_gpu=True)["set-resources"]
    on_gpu = {rule for rule, values in gpu.items() if values.get("gpu")}
    assert on_gpu == {"pretrain", "pretrain_member", "score_cnn_shard", "shipped_model"}


def test_site_values_and_gpu_requests_reach_the_jobs(tmp_path):
    """Snakemake reads the uncommented block (anchors and all) and gives each rule its values; the
    workflow profile profiles/default, which Snakemake also loads, does not replace them."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "config.yaml").write_text(yaml.safe_dump(site_block(uncomment_gpu=True)))
    workdir = write_workdir(tmp_path / "wf", small_config())
    profiles = ["--profile", str(PROFILE), "--profile", str(tmp_path / "site")]
    dry = subprocess.run(snakemake(workdir, "-n", *profiles), capture_output=True, text=True, timeout=300)
    assert dry.returncode == 0, dry.stdout[-2000:] + dry.stderr[-2000:]
    resources = {rule: dict(item.split("=", 1) for item in listed.split(", "))
                 for rule, listed in re.findall(r"^[ ]*(?:local)?rule (\w+):\n(?:.*\n)*?\s+resources: (.*)$",
                                                dry.stdout, re.M)}
    assert set(resources) == set(declared_resources()) - NOT_IN_ALL | {"all"}
    for rule in cluster_rules() - NOT_IN_ALL:
        gpu = rule in ("pretrain", "score_cnn_shard")
        site = {"slurm_account": "your_account", "slurm_partition": "gpu" if gpu else "cpu"}
        assert {k: resources[rule].get(k) for k in ("slurm_account", "slurm_partition", "gpu")} == {
            **site, "gpu": "1" if gpu else None}, rule
        assert int(resources[rule]["mem_mb"]) == declared_resources()[rule][1]
    for rule in local_rules() - NOT_IN_ALL:
        assert not any(k.startswith("slurm_") for k in resources[rule]), rule


# --- a real cluster ---------------------------------------------------------------------------------


REQUIRE_ENV = "DEN_REQUIRE_SLURM"  # .ci/run sets it to 1 where it installed SLURM: a skip fails the run


def loud_skip(request, reason):
    """Skip, with a banner past pytest's output capture, a warning and the skip reason (-ra);
    fail instead where DEN_REQUIRE_SLURM=1 (CI, whose SLURM test must not skip silently)."""
    message = f"SLURM TEST SKIPPED: {reason}. profiles/slurm was NOT tested on a cluster."
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{message} ({REQUIRE_ENV}=1: the SLURM test must run here)")
    bar = "!" * 100
    with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        print(f"\n{bar}\n!!! {message}\n{bar}", file=sys.stderr, flush=True)
    warnings.warn(message, stacklevel=2)
    pytest.skip(message)


def test_a_skip_fails_where_slurm_is_required(request, monkeypatch):
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="must run here"):
        loud_skip(request, "(a check of loud_skip itself, not a real skip)")


def which(program):
    """A program on PATH, or in the sbin directories (not on every user's PATH)."""
    return shutil.which(program, path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def available_memory_mb():
    meminfo = Path("/proc/meminfo").read_text()
    return int(re.search(r"^MemAvailable:\s+(\d+) kB", meminfo, re.M).group(1)) // 1024


def tail(path, chars=3000):
    path = Path(path)
    if not path.exists():
        return f"({path} missing)"
    return f"--- {path} ---\n{path.read_text(errors='replace')[-chars:]}"


@dataclass
class Cluster:
    root: Path
    env: dict
    memory_mb: int
    ctld_log: Path

    def run(self, *args, timeout=30):
        return subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=timeout)


def wait_until(condition, timeout, what, logs=()):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"{what} not within {timeout} s\n" + "\n".join(tail(log) for log in logs))


def stop(process, name):
    """Stop a daemon we started (a direct child, in the foreground) by its PID: TERM, then KILL."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        print(f"{name} (pid {process.pid}) ignored SIGTERM for 30 s: SIGKILL", file=sys.stderr)
        process.kill()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def slurm_cluster(request, tmp_path_factory):
    missing = [program for program in PROGRAMS if which(program) is None]
    if missing:
        loud_skip(request, f"{', '.join(missing)} not on PATH (apt-get install slurm-wlm munge)")
    if os.geteuid() != 0:
        loud_skip(request, "needs root (the test cluster runs its daemons and jobs as SlurmUser=root)")

    root = tmp_path_factory.mktemp("slurm")
    for name in ("munge", "state", "spool", "log", "bin"):
        (root / name).mkdir(mode=0o700)
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    socket_path = root / "munge" / "munge.socket"
    host = socket.gethostname().split(".")[0]
    memory_mb = int(available_memory_mb() * 0.8)
    conf = root / "slurm.conf"
    conf.write_text(f"""\
ClusterName=dentest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket_path}
StateSaveLocation={root / "state"}
SlurmdSpoolDir={root / "spool"}
SlurmctldPidFile={root / "slurmctld.pid"}
SlurmdPidFile={root / "slurmd.pid"}
SlurmctldLogFile={root / "log" / "slurmctld.log"}
SlurmdLogFile={root / "log" / "slurmd.log"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={memory_mb} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName={PARTITION} Nodes=ALL MaxTime=INFINITE State=UP
""")
    # The jobstep executor drops SLURM_* variables (SLURM_CONF too) for the srun inside each job; a
    # real cluster has /etc/slurm/slurm.conf on every node, this one finds its config through a wrapper.
    srun = root / "bin" / "srun"
    srun.write_text(f"#!/bin/sh\nSLURM_CONF={shlex.quote(str(conf))} exec {which('srun')} \"$@\"\n")
    srun.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_"))}
    env.update(SLURM_CONF=str(conf), PATH=f"{root / 'bin'}{os.pathsep}{env.get('PATH', '')}")

    daemons = []  # (name, Popen): started in the foreground, so each PID is the daemon's own

    def start(name, *args):
        with open(root / "log" / f"{name}.out", "w") as out:
            process = subprocess.Popen([which(name), *args], env=env, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        daemons.append((name, process))
        return process

    cluster = Cluster(root, env, memory_mb, root / "log" / "slurmctld.log")
    try:
        started = time.monotonic()
        start("munged", "--foreground", "--force", f"--key-file={key}", f"--socket={socket_path}",
              f"--pid-file={root / 'munge' / 'munged.pid'}", f"--seed-file={root / 'munge' / 'munged.seed'}",
              f"--log-file={root / 'log' / 'munged.log'}")
        wait_until(socket_path.exists, 30, "munged's socket", [root / "log" / "munged.log"])
        start("slurmctld", "-D", "-f", str(conf))
        start("slurmd", "-D", "-f", str(conf), "-N", host)

        def node_idle():
            for name, process in daemons:
                assert process.poll() is None, f"{name} exited\n" + tail(root / "log" / f"{name}.log")
            sinfo = cluster.run("sinfo", "--noheader", "-p", PARTITION, "-o", "%T")
            return sinfo.returncode == 0 and sinfo.stdout.strip() == "idle"

        wait_until(node_idle, 60, "an idle SLURM node", [root / "log" / f"{d}.log" for d in DAEMON_LOGS])
        print(f"SLURM test cluster up in {time.monotonic() - started:.1f} s "
              f"(pids {', '.join(f'{n} {p.pid}' for n, p in daemons)})", file=sys.stderr)
        yield cluster
    finally:
        if any(name == "slurmctld" and process.poll() is None for name, process in daemons):
            try:  # jobs left by a failed or timed-out run
                cluster.run("scancel", "--full", "--user", "root", "--quiet")
            except subprocess.TimeoutExpired:
                pass
        for name, process in reversed(daemons):
            stop(process, name)



def run_with_log(command, log, env=None):
    with open(log, "w") as out:
        return subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)


def finish(process, log, timeout, what):
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
        pytest.fail(f"{what} took over {timeout} s\n{tail(log)}")


def time_limit_minutes(text):
    """squeue's %l (`MM:SS`, `H:MM:SS` or `D-HH:MM:SS`) in minutes."""
    days, _, clock = text.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    hours, minutes = (parts[0], parts[1]) if len(parts) == 3 else (0, parts[0])
    return int(days or 0) * 1440 + hours * 60 + minutes


def same_results(local, cluster):
    """Every output of the local run, the same in the cluster's run (models: same weights)."""
    def outputs(root):
        return sorted(p.relative_to(root) for p in (root / "results").rglob("*")
                      if p.is_file() and p.relative_to(root).parts[1] not in ("logs", "benchmarks"))

    assert outputs(local) == outputs(cluster)
    for path in outputs(local):
        a, b = local / path, cluster / path
        if path.suffix in (".csv", ".tex", ".md"):
            assert a.read_text() == b.read_text(), path
        elif path.suffix == ".json":
            assert json.loads(a.read_text()) == json.loads(b.read_text()), path
        elif path.suffix == ".npz":
            with np.load(a, allow_pickle=False) as x, np.load(b, allow_pickle=False) as y:
                assert sorted(x.files) == sorted(y.files), path
                for name in x.files:
                    if x[name].dtype.kind in "biuf":  # the string metadata holds timings (steps_per_s)
                        np.testing.assert_array_equal(x[name], y[name], err_msg=f"{path}: {name}")
        else:
            assert b.stat().st_size > 1000, path  # figures: PDFs hold their creation time
    return outputs(local)


@pytest.mark.slurm
def test_the_workflow_runs_through_the_slurm_profile_like_a_local_run(slurm_cluster, tmp_path):
    config = small_config()
    declared = declared_resources()
    # The site values a user sets in profiles/slurm, in its layout: a partition (not the default one)
    # for every rule that runs as a SLURM job; memory capped where this machine has less.
    site = {rule: {"slurm_partition": PARTITION} for rule in cluster_rules()}
    for rule in site:
        if declared[rule][1] > slurm_cluster.memory_mb:
            site[rule]["mem_mb"] = slurm_cluster.memory_mb
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "config.yaml").write_text(yaml.safe_dump({"set-resources": site}))

    # The local reference run goes along (2 cores; the cluster run mostly waits on SLURM).
    local_dir = write_workdir(tmp_path / "local", config)
    local = run_with_log(snakemake(local_dir, "--cores", "2"), tmp_path / "local.log")
    slurm_dir = write_workdir(tmp_path / "cluster", config)
    log = tmp_path / "cluster.log"
    started = time.monotonic()
    try:
        cluster_run = run_with_log(
            snakemake(slurm_dir, "--profile", str(PROFILE), "--profile", str(tmp_path / "site"),
                      # no accounting database here: job states from squeue (MinJobAge=3600)
                      "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "2",
                      "--slurm-keep-successful-logs", "--retries", "0", "--latency-wait", "10"),
            log, env=slurm_cluster.env)
        finish(cluster_run, log, STEP_S, "the workflow on SLURM")
        cluster_s = time.monotonic() - started
        finish(local, tmp_path / "local.log", STEP_S, "the local run")
    finally:
        if local.poll() is None:
            local.kill()
            local.wait(timeout=30)
    text = log.read_text()
    slurm_logs = list((slurm_dir / ".snakemake" / "slurm_logs").rglob("*.log"))
    failed_logs = [p for p in slurm_logs if "Error" in p.read_text(errors="replace")]
    assert cluster_run.returncode == 0, "\n".join([tail(log, 6000), *map(tail, failed_logs)])
    assert local.returncode == 0, tail(tmp_path / "local.log")
    print(f"workflow on SLURM: {cluster_s:.0f} s", file=sys.stderr)

    # Each cluster job went through sbatch: its job id in Snakemake's log, in slurmctld's log of
    # batch submissions, and in the controller's job history with the rule's resources.
    job_ids = re.findall(r"has been submitted with SLURM jobid (\d+) ", text)
    ctld_log = slurm_cluster.ctld_log.read_text()
    for job_id in job_ids:
        assert f"_slurm_rpc_submit_batch_job: JobId={job_id} " in ctld_log, job_id
    history = slurm_cluster.run("squeue", "--states=all", "--noheader", "--format=%i|%T|%P|%C|%m|%l|%k")
    assert history.returncode == 0, history.stderr
    jobs = {row[0]: row[1:] for row in (line.split("|") for line in history.stdout.splitlines())}
    (group, ((grouped_rule,), per_job)), = [(g, (tuple(r), n)) for g, (r, n) in profile_groups().items()]
    cores = yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text())["cores"]
    ran, group_jobs = {}, []
    for job_id in job_ids:
        state, partition, cpus, memory, limit, comment = jobs[job_id]
        assert (state, partition) == ("COMPLETED", PARTITION), (job_id, comment)
        assert list((slurm_dir / ".snakemake" / "slurm_logs").rglob(f"{job_id}.log")), job_id
        if comment == f"rule_{group}_{grouped_rule}":  # a group job: rule_<group>_<its rules>
            group_jobs.append((int(cpus), int(memory.removesuffix("M")), time_limit_minutes(limit)))
            continue
        rule = re.match(r"rule_(\w+?)_wildcards_", comment).group(1)
        threads, mem_mb, runtime = declared[rule]
        assert int(cpus) == threads and memory == f"{site[rule].get('mem_mb', mem_mb)}M", (job_id, comment)
        assert time_limit_minutes(limit) == runtime, (job_id, comment, limit)
        ran[rule] = ran.get(rule, 0) + 1
    expected = {"prepare_dataset": 2, "prepare_images": 1, "score_cnn_shard": 2, "simulated_task": 1,
                "pretrain": 1}
    assert ran == expected and set(ran) | {grouped_rule} == cluster_rules() - NOT_IN_ALL
    # The evaluations ran in one SLURM job (up to per_job share one), which asked for what two side by
    # side need (cores: 2): 2 CPUs, 2 x 3000 MB, one round of 30 min
    evaluations = len(list((slurm_dir / "results" / "logs" / grouped_rule).rglob("*.log")))
    assert evaluations == 2 and len(group_jobs) == -(-evaluations // per_job) == 1, (evaluations, group_jobs)
    assert group_jobs == [group_request(evaluations, *declared[grouped_rule], cores)] == [(2, 6000, 30)]
    expected[grouped_rule] = evaluations
    assert len(jobs) == len(job_ids)  # nothing else was submitted; table and figure ran here
    for rule in local_rules() - {"all"} - NOT_IN_ALL:
        assert f"localrule {rule}:" in text

    outputs = same_results(local_dir, slurm_dir)
    assert {p.parts[1] for p in outputs} == {"data", "images", "zoo", "models", "scores", "tables", "figures"}
    logs = list((slurm_dir / "results" / "logs").rglob("*.log"))
    benchmarks = list((slurm_dir / "results" / "benchmarks").rglob("*.tsv"))
    assert len(logs) == len(benchmarks) == sum(expected.values()) + len(local_rules() - {"all"} - NOT_IN_ALL)
