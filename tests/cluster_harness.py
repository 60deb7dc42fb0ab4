"""A real local Redis Cluster for tests: 3 masters + 3 replicas on 127.0.0.1.

Every node is its own ``redis-server --cluster-enabled yes`` (the binary from
``find_redis_server()``), on a client port and a cluster-bus port picked free.
The cluster is formed the way ``redis-cli --cluster create`` would, but with
plain commands over raw sockets, so redis-cli is not needed: distinct config
epochs, CLUSTER MEET, CLUSTER ADDSLOTSRANGE on the masters, CLUSTER REPLICATE
on the replicas, then wait for ``cluster_state:ok`` everywhere and for every
replica's link to be up.

No process outlives the test: nodes are stopped in the fixture's finalizer
(also when the test failed), and each is started with PR_SET_PDEATHSIG, so the
kernel kills it if the test process itself dies.

Fixtures (import them into a test module, or ``from tests.cluster_harness import *``):

* ``redis_cluster`` (module): a running ``LocalCluster``, flushed per test by
  ``cluster_url``. Skipped, with the reason, only when no redis-server binary is found.
* ``cluster_url`` (function): its ``redis+cluster://`` URL after FLUSHALL on every master.
* ``fresh_cluster`` (function): a cluster of its own, for tests that break it (failover).
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import hiredis
import pytest

from firelane.redisio import RedisServerNotFound, find_redis_server

__all__ = ["ClusterNode", "LocalCluster", "cluster_url", "fresh_cluster", "redis_cluster", "require_redis_server"]

SLOT_COUNT = 16384
_PR_SET_PDEATHSIG = 1


class ClusterError(RuntimeError):
    """The local cluster could not be started or did not reach the state asked for."""


class _NodeExited(Exception):
    """A node's process ended while we waited for it (not worth waiting on)."""


def require_redis_server() -> str:
    """The redis-server binary, or a pytest skip naming why there is none."""
    try:
        return find_redis_server()
    except RedisServerNotFound as exc:
        pytest.skip(f"Redis Cluster tests need a redis-server binary: {exc}")


# Resolved here, in the parent: between fork and exec the child may only call
# what is already loaded (no dlopen, whose locks another thread may hold).
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: the kernel sends SIGKILL to the
    # node when the thread that started it dies (nodes are started from the
    # main thread, which lives as long as the test process).
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports free on 127.0.0.1 right now."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def command(port: int, *args: str | bytes | int, timeout: float = 5.0) -> object:
    """One command to the node on ``port`` over a short-lived blocking socket.

    Error replies are returned (as ``hiredis.ReplyError``), not raised, so
    callers can wait for a state that is still an error (LOADING, CLUSTERDOWN).
    """
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(hiredis.pack_command(tuple(args)))
        reader = hiredis.Reader()
        while (reply := reader.gets()) is False:
            data = sock.recv(65536)
            if not data:
                raise ConnectionError(f"redis-server on port {port} closed the connection")
            reader.feed(data)
    return reply


def _ok(port: int, *args: str | bytes | int) -> object:
    reply = command(port, *args)
    if isinstance(reply, hiredis.ReplyError):
        raise ClusterError(f"{' '.join(map(str, args))} on port {port} failed: {reply}")
    return reply


def _info(port: int, section: str) -> dict[str, str]:
    text = _ok(port, "INFO", section)
    assert isinstance(text, bytes)
    return dict(line.split(":", 1) for line in text.decode().splitlines() if ":" in line)


@dataclass
class ClusterNode:
    index: int
    port: int
    bus_port: int
    directory: Path
    process: subprocess.Popen[bytes] | None = None
    node_id: str = ""

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        path = self.directory / "redis.log"
        if not path.exists():
            return "(no log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@dataclass
class LocalCluster:
    """A Redis Cluster of real redis-server processes in ``directory``.

    ``node_timeout_ms`` is ``cluster-node-timeout``: how long a master may be
    silent before it is suspected; automatic failover takes about that plus
    a second. Small values make failover fast but risk spurious failovers on
    a loaded machine, so the default is 1 s.
    """

    directory: Path
    masters: int = 3
    replicas_per_master: int = 1
    node_timeout_ms: int = 1000
    binary: str = ""
    startup_timeout: float = 30.0
    nodes: list[ClusterNode] = field(default_factory=list)

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> LocalCluster:
        self.binary = self.binary or find_redis_server()
        count = self.masters * (1 + self.replicas_per_master)
        ports = _free_ports(2 * count)
        for index in range(count):
            directory = self.directory / f"node-{index}"
            directory.mkdir(parents=True, exist_ok=True)
            self.nodes.append(ClusterNode(index, ports[2 * index], ports[2 * index + 1], directory))
        try:
            for node in self.nodes:
                self._spawn(node)
            for node in self.nodes:
                self._wait_answers_on_free_ports(node)
            self._form()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop every node (SIGKILL: the data is throwaway) and reap it."""
        for node in self.nodes:
            if node.process is not None and node.process.poll() is None:
                node.process.kill()
        for node in self.nodes:
            if node.process is not None:
                node.process.wait()

    def __enter__(self) -> LocalCluster:
        # Both ``with LocalCluster(...)`` and ``with cluster.start()`` work.
        return self if self.nodes else self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- what tests use --------------------------------------------------------

    @property
    def url(self) -> str:
        """A ``redis+cluster://`` URL naming every node as a seed."""
        return "redis+cluster://" + ",".join(node.address for node in self.nodes)

    def node_on(self, port: int) -> ClusterNode:
        return next(node for node in self.nodes if node.port == port)

    def slot_owners(self) -> dict[int, int]:
        """Master port per slot range start, as a running node reports it (CLUSTER SLOTS)."""
        for node in self.nodes:
            if not node.running:
                continue
            try:
                reply = command(node.port, "CLUSTER", "SLOTS")
            except OSError:
                continue
            if isinstance(reply, list):
                return {int(entry[0]): int(entry[2][1]) for entry in reply}
        raise ClusterError("no running node answers CLUSTER SLOTS")

    def master_of_slot(self, slot: int) -> ClusterNode:
        for node in self.nodes:
            if not node.running:
                continue
            reply = command(node.port, "CLUSTER", "SLOTS")
            if isinstance(reply, list):
                for start, end, master, *_replicas in reply:
                    if int(start) <= slot <= int(end):
                        return self.node_on(int(master[1]))
        raise ClusterError(f"no running node knows the master of slot {slot}")

    def replicas_of(self, master: ClusterNode) -> list[ClusterNode]:
        reply = _ok(master.port, "CLUSTER", "REPLICAS", master.node_id)
        assert isinstance(reply, list)
        ports = [int(line.split()[1].split(b":")[1].split(b"@")[0]) for line in reply]
        return [self.node_on(port) for port in ports]

    def flushall(self) -> None:
        for node in self.nodes:
            if node.running and _info(node.port, "replication").get("role") == "master":
                _ok(node.port, "FLUSHALL")
                _ok(node.port, "SCRIPT", "FLUSH")

    def kill(self, node: ClusterNode) -> None:
        """SIGKILL the node: no shutdown, no last words to its replicas."""
        assert node.process is not None
        node.process.send_signal(signal.SIGKILL)
        node.process.wait()

    def restart(self, node: ClusterNode, *, wait: bool = True) -> None:
        """Start a killed node again on its ports and its nodes.conf (it rejoins the cluster).

        Call it from the main thread (see PR_SET_PDEATHSIG above); with
        ``wait=False`` wait for it with ``wait_answers`` from anywhere.
        """
        assert not node.running
        self._spawn(node)
        if wait:
            self.wait_answers(node)

    def wait_answers(self, node: ClusterNode) -> None:
        self._wait_answers(node)

    def move_slot(self, slot: int, target: ClusterNode) -> None:
        """Migrate ``slot`` (and its keys) to master ``target``, as redis-cli --cluster reshard does."""
        source = self.master_of_slot(slot)
        if source is target:
            return
        _ok(target.port, "CLUSTER", "SETSLOT", slot, "IMPORTING", source.node_id)
        _ok(source.port, "CLUSTER", "SETSLOT", slot, "MIGRATING", target.node_id)
        while keys := _ok(source.port, "CLUSTER", "GETKEYSINSLOT", slot, 100):
            assert isinstance(keys, list)
            _ok(source.port, "MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *keys)
        for node in (target, source, *(n for n in self.nodes if n.running and n not in (target, source))):
            if self.is_master(node):
                _ok(node.port, "CLUSTER", "SETSLOT", slot, "NODE", target.node_id)
        self.wait_until(lambda: self._all_agree_on_owner(slot, target), f"every node sees slot {slot} on node {target.index}")

    def _all_agree_on_owner(self, slot: int, owner: ClusterNode) -> bool:
        for node in self.nodes:
            if not node.running:
                continue
            reply = _ok(node.port, "CLUSTER", "SLOTS")
            assert isinstance(reply, list)
            if not any(int(start) <= slot <= int(end) and int(master[1]) == owner.port for start, end, master, *_ in reply):
                return False
        return True

    def current_masters(self) -> list[ClusterNode]:
        return [node for node in self.nodes if self.is_master(node)]

    def wait_until(self, predicate, what: str, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
        """Poll ``predicate()`` (errors count as "not yet") until it holds, or fail naming ``what``."""
        deadline = time.monotonic() + timeout
        last_error: BaseException | None = None
        while time.monotonic() < deadline:
            try:
                if predicate():
                    return
            except (OSError, ClusterError, KeyError, ValueError) as exc:
                last_error = exc
            time.sleep(0.05)
        logs = "\n".join(f"--- node {n.index} (port {n.port}):\n{n.log_tail()}" for n in self.nodes)
        raise ClusterError(f"the cluster did not reach '{what}' within {timeout}s (last error: {last_error!r})\n{logs}")

    def is_master(self, node: ClusterNode) -> bool:
        return node.running and _info(node.port, "replication").get("role") == "master"

    def state_ok(self, nodes: Sequence[ClusterNode] | None = None) -> bool:
        for node in nodes if nodes is not None else self.nodes:
            if not node.running:
                continue
            info = _ok(node.port, "CLUSTER", "INFO")
            assert isinstance(info, bytes)
            if b"cluster_state:ok" not in info:
                return False
        return True

    def replicas_in_sync(self) -> bool:
        """Every running replica's link is up and it has the whole stream its master sent."""
        for node in self.nodes:
            if not node.running:
                continue
            replication = _info(node.port, "replication")
            if replication.get("role") != "slave":
                continue
            if replication.get("master_link_status") != "up" or replication.get("master_sync_in_progress") != "0":
                return False
            master = self.node_on(int(replication["master_port"]))
            if not master.running:
                return False
            master_offset = int(_info(master.port, "replication")["master_repl_offset"])
            if int(replication["slave_repl_offset"]) < master_offset:
                return False
        return True

    def standalone_node(self) -> ClusterNode:
        """One more redis-server, NOT in cluster mode, on a free port (stopped with the rest)."""
        port, bus_port = _free_ports(2)
        node = ClusterNode(len(self.nodes), port, bus_port, self.directory / f"standalone-{len(self.nodes)}")
        node.directory.mkdir(parents=True, exist_ok=True)
        self.binary = self.binary or find_redis_server()
        self.nodes.append(node)
        self._spawn(node, cluster=False)
        self._wait_answers(node)
        return node

    # -- internals -----------------------------------------------------------

    def _spawn(self, node: ClusterNode, *, cluster: bool = True) -> None:
        cluster_args = [
            "--cluster-enabled", "yes",
            "--cluster-port", str(node.bus_port),
            "--cluster-config-file", str(node.directory / "nodes.conf"),
            "--cluster-node-timeout", str(self.node_timeout_ms),
            # Always let the replica take over, however long its link was down.
            "--cluster-replica-validity-factor", "0",
        ]  # fmt: skip
        args = [
            self.binary,
            "--port", str(node.port),
            "--bind", "127.0.0.1",
            *(cluster_args if cluster else []),
            "--dir", str(node.directory),
            "--daemonize", "no",
            "--appendonly", "no",
            "--save", "",
            "--protected-mode", "no",
            # A new replica syncs at once instead of waiting 5 s for others to join the transfer.
            "--repl-diskless-sync-delay", "0",
            # CLUSTER SLOTS lists a replica only once it reports a non-zero
            # offset, which it does after its master's next ping (default 10 s).
            "--repl-ping-replica-period", "1",
            "--logfile", str(node.directory / "redis.log"),
        ]  # fmt: skip
        node.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd=node.directory, preexec_fn=_die_with_parent,
        )

    def _wait_answers(self, node: ClusterNode) -> None:
        def answers() -> bool:
            if not node.running:
                raise _NodeExited(f"node {node.index} exited with code {node.process.returncode if node.process else '?'}")
            return command(node.port, "PING", timeout=1.0) == b"PONG"

        try:
            self.wait_until(answers, f"node {node.index} answers PING", self.startup_timeout)
        except _NodeExited as exc:
            raise ClusterError(
                f"{exc}\ncommand: {self.binary} ... --port {node.port}\nits log ends:\n{node.log_tail()}"
            ) from None

    def _wait_answers_on_free_ports(self, node: ClusterNode, attempts: int = 3) -> None:
        # A port seen free may be taken before the node binds it (other test
        # runs share the machine): then the node gets two new ports.
        for attempt in range(attempts):
            try:
                self._wait_answers(node)
                return
            except ClusterError:
                if attempt == attempts - 1 or node.running or "Address already in use" not in node.log_tail():
                    raise
            node.port, node.bus_port = _free_ports(2)
            self._spawn(node)

    def _form(self) -> None:
        for epoch, node in enumerate(self.nodes, start=1):
            node.node_id = _ok(node.port, "CLUSTER", "MYID").decode()  # type: ignore[union-attr]
            # Distinct epochs up front (as redis-cli does) spare the cluster
            # its epoch-collision resolution before it can agree on anything.
            _ok(node.port, "CLUSTER", "SET-CONFIG-EPOCH", epoch)
        first = self.nodes[0]
        for node in self.nodes[1:]:
            _ok(first.port, "CLUSTER", "MEET", "127.0.0.1", node.port, node.bus_port)
        masters = self.nodes[: self.masters]
        per_master = SLOT_COUNT // self.masters
        for i, master in enumerate(masters):
            start = i * per_master
            end = SLOT_COUNT - 1 if i == self.masters - 1 else start + per_master - 1
            _ok(master.port, "CLUSTER", "ADDSLOTSRANGE", start, end)
        self.wait_until(self._everyone_knows_everyone, "every node knows every other node", self.startup_timeout)
        for i, replica in enumerate(self.nodes[self.masters:]):
            _ok(replica.port, "CLUSTER", "REPLICATE", masters[i % self.masters].node_id)
        self.wait_until(self.state_ok, "cluster_state:ok on every node", self.startup_timeout)
        self.wait_until(self.replicas_in_sync, "every replica in sync with its master", self.startup_timeout)
        self.wait_until(self._views_agree, "every node sees 3 masters with their replicas", self.startup_timeout)

    def _everyone_knows_everyone(self) -> bool:
        for node in self.nodes:
            listing = _ok(node.port, "CLUSTER", "NODES")
            assert isinstance(listing, bytes)
            lines = [line for line in listing.decode().splitlines() if line.strip()]
            if len(lines) != len(self.nodes) or any("handshake" in line or "noaddr" in line for line in lines):
                return False
        return True

    def _views_agree(self) -> bool:
        for node in self.nodes:
            reply = _ok(node.port, "CLUSTER", "SLOTS")
            assert isinstance(reply, list)
            if len(reply) != self.masters or any(len(entry) - 3 != self.replicas_per_master for entry in reply):
                return False
        return True


# -- fixtures ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    binary = require_redis_server()
    cluster = LocalCluster(tmp_path_factory.mktemp("cluster"), binary=binary)
    with cluster.start():
        yield cluster


@pytest.fixture
def cluster_url(redis_cluster: LocalCluster) -> str:
    redis_cluster.wait_until(redis_cluster.state_ok, "cluster_state:ok on every node")
    redis_cluster.flushall()
    return redis_cluster.url


@pytest.fixture
def fresh_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    binary = require_redis_server()
    cluster = LocalCluster(tmp_path / "cluster", binary=binary)
    with cluster.start():
        yield cluster
