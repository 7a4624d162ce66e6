"""The cluster's configuration, without starting it: the balancer config rendered from
deploy/haproxy.cfg.template is valid HAProxy, and `make run-cluster`'s Procfile has the
topology of docs/run-and-deploy.md (N web processes behind the balancer, M workers, one beat)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.live_server import run_script

run = run_script()
HAPROXY = run.haproxy_binary()
needs_haproxy = pytest.mark.skipif(HAPROXY is None, reason="haproxy is not installed")


@needs_haproxy
def test_the_rendered_balancer_config_is_valid_haproxy(tmp_path: Path) -> None:
    config = run.haproxy_config(
        bind="127.0.0.1:8000",
        servers=[("127.0.0.1", 8001), ("127.0.0.1", 8002), ("10.0.0.2", 8001)],
        health_host="play.example.com",
        maxconn=1000,
    )
    path = tmp_path / "haproxy.cfg"
    path.write_text(config)

    checked = subprocess.run(
        [HAPROXY, "-c", "-q", "-f", str(path)], capture_output=True, text=True, check=False
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert re.findall(r"^\s+server (\S+) (\S+)$", config, re.M) == [
        ("web1", "127.0.0.1:8001"),
        ("web2", "127.0.0.1:8002"),
        ("web3", "10.0.0.2:8001"),
    ]
    assert "hdr Host play.example.com" in config
    assert "balance roundrobin" in config
    # Table affinity: the table sockets' backend hashes the path over the same processes,
    # each following its health check in `daphne`.
    tables = config[config.index("backend daphne_tables") :]
    assert "use_backend daphne_tables if { path_beg /ws/table/ }" in config
    assert "balance uri" in tables and "hash-type consistent" in tables
    assert re.findall(r"^\s+server (\S+) (\S+) track (\S+)$", tables, re.M) == [
        ("web1", "127.0.0.1:8001", "daphne/web1"),
        ("web2", "127.0.0.1:8002", "daphne/web2"),
        ("web3", "10.0.0.2:8001", "daphne/web3"),
    ]
    # No sticky sessions: neither a persistence cookie nor a stick table.
    assert not re.search(r"^\s*(cookie|stick|appsession)\b", config, re.M)


@needs_haproxy
def test_run_cluster_runs_n_web_processes_m_workers_and_one_beat(tmp_path: Path) -> None:
    lines = run.cluster_procfile_lines(
        host="127.0.0.1",
        port=8100,
        var_dir=tmp_path,
        redis_port=6390,
        web_processes=3,
        worker_processes=2,
        haproxy=HAPROXY,
    )
    processes = dict(line.split(": ", 1) for line in lines)

    assert sorted(processes) == sorted(
        ["redis", "web1", "web2", "web3", "worker1", "worker2", "beat", "balancer"]
        + ["stats", "ready"]
    )
    for n in (1, 2, 3):
        assert f" -p {8100 + n} --proxy-headers " in processes[f"web{n}"]
    for n in (1, 2):
        assert f" -n worker{n}@%h " in processes[f"worker{n}"]
    assert sum(" beat " in command or " -B" in command for command in processes.values()) == 1
    assert processes["balancer"].endswith(f"-db -f {tmp_path / 'haproxy.cfg'}")
    config = (tmp_path / "haproxy.cfg").read_text()
    assert "bind 127.0.0.1:8100" in config
    assert "server web3 127.0.0.1:8103" in config


@needs_haproxy
def test_ensure_haproxy_is_quiet_when_haproxy_is_there() -> None:
    script = Path(__file__).resolve().parents[2] / "scripts" / "ensure-haproxy"

    done = subprocess.run([str(script)], capture_output=True, text=True, check=False)

    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
