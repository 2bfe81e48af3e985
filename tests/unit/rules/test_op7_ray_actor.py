"""OP-7.41: a Ray actor (vLLM's GPU worker) died, read from Ray's RayActorError and the GCS's reason after it; the
reason decides where to look."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op7_ray_actor import RULE
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

# Ray's words as the caller prints them: the exception, its tab-indented facts, and the GCS's reason
DIED = [
    "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.",
    "\tclass_name: RayWorkerWrapper",
    "\tactor_id: 5c8f0bd8a1b0c9e1e9a0d4b601000000",
    "\tpid: 41022",
    "\tnamespace: 3ac8e2c0",
    "\tip: 10.0.0.12",
]
KILLED = (
    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
    "unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The "
    "process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The "
    "worker is crashed unexpectedly due to SIGSEGV or other unexpected errors."
)
OWNER = (
    "The actor is dead because its owner has died. Owner Id: 05000000ffff Owner Ip address: 10.208.0.212 Owner worker "
    "exit type: SYSTEM_ERROR Worker exit detail: Owner's node has crashed."
)
NODE = "The actor is dead because its node has died. Node Id: 56b97436e67393f15565e024278867700c2bd0ec6ca9e0dac7261fd1"


def _findings(*lines: str):
    return RULE.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_vllms_worker_killed_without_an_exception_points_at_the_kernel_log_and_its_own_log():
    [finding] = _findings(*DIED, KILLED)
    assert finding.title == (
        "vLLM's GPU worker (Ray actor RayWorkerWrapper, pid 41022) died: its process was killed or crashed, without a "
        "Python exception"
    )
    assert "dmesg -T" in finding.actions[0]
    assert "ray logs actor --id 5c8f0bd8a1b0c9e1e9a0d4b601000000" in finding.actions[1]
    assert "worker-*-41022.err" in finding.actions[1]
    assert "every rank" in finding.summary and finding.evidence[1].name == "Ray's reason (SYSTEM_ERROR)"


def test_the_reason_joined_to_the_error_reads_the_same_and_the_detail_is_ray_s():
    events = parse_lines([DIED[0], NODE]).events
    assert [(e.kind, e.component) for e in events] == [(K.RAY_ACTOR_DIED, "node")]
    [finding] = _findings(DIED[0], NODE)
    assert finding.title == "a Ray actor died: its node left the Ray cluster (Ray: its node has died)"
    assert "ray list nodes --filter state=DEAD" in finding.actions[0]


def test_an_owner_that_died_first_makes_this_death_a_consequence():
    [finding] = _findings(*DIED[:2], OWNER)
    assert finding.title.endswith("the process that created it died first (Ray: its owner has died): this death is "
                                  "a consequence")  # fmt: skip
    assert finding.evidence[1].value == "Owner's node has crashed."


def test_without_rays_reason_it_asks_for_the_line_after_instead_of_guessing():
    [finding] = _findings(DIED[0])
    assert "is not in the text" in finding.title and finding.actions[0].startswith("Copy the lines after")


def test_rays_memory_monitor_beside_it_is_the_cause_and_vc2_no_longer_answers():
    oom = "Worker exit detail: Task was killed due to the node running low on memory."
    assert _findings(*DIED, oom) == []
    top = evaluate(Facts(events=parse_lines([*DIED, KILLED]).events)).findings[0]
    assert top.rule == "OP-7.41"


NODE_DEAD = (
    "2026-12-01 05:15:30,774 WARNING worker.py:1866 -- The node with node id: 9426f44574cce4866be798cfed308f2d3e21ba69"
    "487d422872cdd6e3 and address: {ip} and node name: {ip} has been marked dead because the detector has missed too "
    "many heartbeats from it. This can happen when a       (1) raylet crashes unexpectedly (OOM, preempted node, etc.)"
)


def test_a_node_ray_declared_dead_names_it_and_where_its_raylet_logged_why():
    lines = [
        NODE_DEAD.format(ip="10.130.0.113"),
        "        (2) raylet has lagging heartbeats due to slow network or busy",
    ]
    [dead] = parse_lines(lines).of_kind(K.RAY_NODE_DEAD)
    assert (dead.address, dead.message) == ("10.130.0.113", "10.130.0.113")
    top = evaluate(Facts(events=parse_lines(lines).events)).findings[0]
    assert top.rule == "OP-7.41"
    assert top.title == (
        "Ray declared node 10.130.0.113 dead: its raylet stopped answering, and every vLLM worker on it is gone"
    )
    assert "raylet.out" in top.actions[0] and "RAY_health_check_failure_threshold" in top.actions[1]
    two = [NODE_DEAD.format(ip="10.130.0.113"), NODE_DEAD.format(ip="10.130.0.114")]
    [finding] = RULE.evaluate(Facts(events=parse_lines(two).events))
    assert "(and 1 other node)" in finding.title
    # the kernel's OOM kill beside it is the cause (OP-7.30)
    killed = "Out of memory: Killed process 4242 (raylet) total-vm:1kB, anon-rss:1048576kB, file-rss:0kB"
    assert RULE.evaluate(Facts(events=parse_lines([killed, *two]).events)) == []


def test_the_drivers_warning_for_a_tasks_worker_and_its_exit_detail_alone_read_as_a_worker_that_died():
    # vllm#2217 (Ray's driver warning, one line) and vllm#5785 (the exit type and detail, pasted alone)
    warning = (
        "2023-12-20 08:58:57,007 WARNING worker.py:2074 -- A worker died or was killed while executing a task by an "
        "unexpected system error. To troubleshoot the problem, check the logs for the dead worker. Worker exit type: "
        "SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file."
    )
    detail = (
        "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. "
        "End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to "
        "high memory usage."
    )
    for line in (warning, detail):
        [finding] = RULE.evaluate(Facts(events=parse_lines([line]).events))
        assert finding.title.endswith("its process was killed or crashed, without a Python exception"), line
        assert finding.actions[0].startswith("On the node that ran it: `dmesg -T")


def test_an_actor_whose_constructor_raised_is_sent_to_the_exception_printed_with_it():
    # OpenRLHF/OpenRLHF#358, ray-project/ray#54739 and #51242, ray-project/kuberay#4366, verbatim: an actor or a Ray
    # Serve replica that hosts vLLM failed while starting; the exception is printed under Ray's error
    for line, who in (
        (
            "ray.exceptions.ActorDiedError: The actor died because of an error raised in its creation task, "
            "ray::LLMRayActor.__init__() (pid=236832, ip=0.0.0.0, actor_id=310c5f405ee4130f2335d35902000000, "
            "repr=<vllm_engine.LLMRayActor object at 0x7ff1c965d870>)",
            "Ray's actor LLMRayActor (pid 236832)",
        ),
        (
            "(ServeController pid=2922) ERROR 2025-04-02 17:25:34,553 controller 2922 -- Exception in Replica(id='m37q"
            "pvvp', deployment='vLLM:qwen-1_5b', app='default'), the replica will be stopped.",
            "Ray's actor vLLM:qwen-1_5b",
        ),
        (
            "ray.exceptions.RayTaskError(RuntimeError): ray::ServeReplica:llms:LLMServer:qwen2_5-0_5b-instruct."
            "initialize_and_get_metadata() (pid=316, ip=10.233.69.249, actor_id=aa3366c129ab60063f7f77cd01000000)",
            "Ray's actor llms:LLMServer:qwen2_5-0_5b-instruct (pid 316)",
        ),
    ):
        [finding] = RULE.evaluate(Facts(events=parse_lines([line]).events))
        assert (
            finding.title == f"{who} died: its constructor raised: the vLLM engine it was starting failed, and the "
            "exception is printed with Ray's error"
        ), line
        assert "servops triage --logs -" in finding.actions[0] and "tensor-parallel" in finding.actions[1]


def test_a_nodes_raylet_seen_dying_is_the_node_lost_with_rays_own_causes():
    # vllm#26899, verbatim: a worker under vLLM's engine core printing its node's raylet's end
    line = (
        "(EngineCore_DP0 pid=3639978) (raylet) Raylet is terminated. Termination is unexpected. Possible reasons "
        "include: (1) SIGKILL by the user or system OOM killer, (2) Invalid memory access from Raylet causing SIGSEGV "
        "or SIGBUS, (3) Other termination signals."
    )
    top = top_finding(line)
    assert top.rule == "OP-7.41" and top.title.startswith("the Ray node's raylet died unexpectedly")
    assert "dmesg" in top.actions[0] and "raylet.out" in top.actions[1]
