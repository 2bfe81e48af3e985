"""OP-7.35: what Kubernetes' own status for the server's pod means, and where its cause is (a fallback: a finding
that names why the container exits takes its place)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op7_pod_status import RULE_POD_STATUS
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import Facts

HEADER = "NAME                    READY   STATUS             RESTARTS      AGE"
CRASHING = "vllm-7d9f8b6c5d-x2k4p   0/1     CrashLoopBackOff   6 (2m ago)    12m"
PULL = (
    '  Warning  Failed     12s (x3 over 55s)  kubelet            Failed to pull image "vllm/vllm-openai:0.11.0": rpc '
    'error: code = NotFound desc = failed to pull and unpack image "docker.io/vllm/vllm-openai:0.11.0": failed to '
    'resolve reference "docker.io/vllm/vllm-openai:0.11.0": docker.io/vllm/vllm-openai:0.11.0: not found'
)


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def _finding(*lines: str):
    [finding] = RULE_POD_STATUS.evaluate(_facts(*lines))
    return finding


def test_a_crashing_pod_is_sent_to_its_previous_runs_log_by_name():
    finding = _finding(HEADER, CRASHING)
    assert finding.title.startswith(
        "pod vllm-7d9f8b6c5d-x2k4p's container keeps exiting and Kubernetes keeps restarting it (CrashLoopBackOff, "
        "6 restarts)"
    )
    assert "kubectl logs vllm-7d9f8b6c5d-x2k4p --previous | servops triage --logs -" in finding.actions[0]


def test_all_namespaces_rows_and_describes_reason_are_read_too():
    [row] = parse_lines(["default   vllm-0   0/1   CrashLoopBackOff   3 (40s ago)   5m"]).events
    assert (row.kind, row.pod, row.restarts) == (K.POD_STATUS, "vllm-0", 3)
    [reason] = parse_lines(["      Reason:       CrashLoopBackOff"]).events
    assert (reason.kind, reason.pod_status) == (K.POD_STATUS, "CrashLoopBackOff")


def test_a_v0_stats_lines_pending_is_no_pod():
    line = "INFO 07-01 10:00:00 metrics.py:341] Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 "
    events = parse_lines([line + "tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 3 reqs"]).events
    assert [e.kind for e in events] == [K.STATS_LINE]


def test_an_oom_kill_that_explains_the_crashes_takes_its_place():
    evaluation = evaluate(_facts("    Last State:     Terminated", "      Reason:       OOMKilled", HEADER, CRASHING))
    rules = [f.rule for f in evaluation.findings]
    assert rules[0] == "OP-7.30" and "OP-7.35" not in rules


def test_a_tag_that_does_not_exist_is_named_with_the_tag_vllms_images_have():
    finding = _finding(
        PULL, '  Normal   BackOff    1s (x4 over 54s)   kubelet   Back-off pulling image "vllm/vllm-openai:0.11.0"'
    )
    assert finding.title == (
        "Kubernetes cannot pull the server's image vllm/vllm-openai:0.11.0: the tag does not exist in that repository"
    )
    assert "vllm/vllm-openai:v0.11.0" in finding.actions[0]


def test_a_registry_that_refuses_the_credentials_is_said_so():
    refused = PULL.split(": rpc error")[0].replace("vllm/vllm-openai:0.11.0", "registry.example.com/llm/vllm:v0.11.0")
    finding = _finding(refused + ": rpc error: code = Unknown desc = failed to authorize: 401 Unauthorized")
    assert finding.title.endswith("the registry refused the node's credentials")
    assert "(vLLM's images are tagged" not in finding.actions[0]


def test_a_missing_secret_is_named():
    finding = _finding('  Warning  Failed     3s (x5 over 50s)  kubelet            Error: secret "hf-token" not found')
    assert finding.title == 'the pod references secret "hf-token", which does not exist in its namespace'


def test_a_pending_pod_is_sent_to_describes_events():
    finding = _finding(HEADER, "vllm-0   0/1     Pending   0          3m")
    assert finding.title == "pod vllm-0 is Pending: no node has taken it yet"
    assert finding.severity.value == "medium"


def test_the_kubelets_volume_events_name_the_volume_and_where_to_look():
    missing = _finding(
        '  Warning  FailedMount  2m (x9 over 20m)  kubelet  MountVolume.SetUp failed for volume "model-cache" : '
        'persistentvolumeclaim "model-cache-pvc" not found'
    )
    assert missing.title == (
        "the pod cannot start: the PersistentVolumeClaim it mounts does not exist in its namespace "
        '(persistentvolumeclaim "model-cache-pvc")'
    )
    timed_out = _finding(
        "  Warning  FailedMount  92s  kubelet  Unable to attach or mount volumes: unmounted volumes=[model-cache], "
        "unattached volumes=[model-cache kube-api-access-x]: timed out waiting for the condition"
    )
    assert timed_out.title.endswith("its volumes were not attached and mounted in time (model-cache)")
    assert "kubectl get volumeattachment" in timed_out.actions[0]
    held = _finding(
        '  Warning  FailedAttachVolume  43s  attachdetach-controller  Multi-Attach error for volume "pvc-1c2d" Volume '
        "is already exclusively attached to one node and can't be attached to another"
    )
    assert "attached to another node (ReadWriteOnce)" in held.title and "Recreate strategy" in held.actions[0]
    secret = _finding(
        '  Warning  FailedMount  5s  kubelet  MountVolume.SetUp failed for volume "hf-token" : secret "hf-token" '
        "not found"
    )
    assert secret.title == 'the pod references secret "hf-token", which does not exist in its namespace'
    nfs = _finding(
        '  Warning  FailedMount  2m  kubelet  MountVolume.SetUp failed for volume "model-cache" : mount failed: exit '
        "status 32"
    )
    assert nfs.title == (
        'the pod cannot start: the node could not mount one of its volumes (volume "model-cache": mount failed: exit '
        "status 32)"
    )
    assert "CSI driver" in nfs.actions[0]


# The kubelet's eviction messages (pkg/kubelet/eviction/helpers.go), as `kubectl describe pod` prints them.
NODE_DISK = (
    "  Warning  Evicted  2m  kubelet  The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, "
    "available: 8Gi. Container vllm was using 52Gi, request is 0, has larger consumption of ephemeral-storage. "
)


def test_a_pod_evicted_for_the_nodes_disk_is_sent_to_a_volume_for_the_model_cache():
    finding = _finding(NODE_DISK)
    assert finding.title == (
        "Kubernetes evicted the pod: the node ran low on ephemeral-storage; container vllm used 52Gi (its request 0)"
    )
    assert "/root/.cache/huggingface" in finding.actions[0] and "PersistentVolumeClaim" in finding.actions[0]
    assert "requests.ephemeral-storage" in finding.actions[1]
    assert evaluate(_facts(NODE_DISK)).findings[0].rule == "OP-7.35"


def test_the_older_eviction_wording_and_describes_reason_are_read_the_same():
    describe = [
        "Status:           Failed",
        "Reason:           Evicted",
        "Message:          The node was low on resource: ephemeral-storage. Container vllm was using 61Gi, which "
        "exceeds its request of 0. ",
    ]
    finding = _finding(*describe)
    assert finding.title.endswith("the node ran low on ephemeral-storage; container vllm used 61Gi (its request 0)")
    assert finding.evidence[0].value == "ephemeral-storage"


def test_a_pod_over_a_storage_limit_of_its_own_names_the_limit():
    titles = [
        _finding(line).title
        for line in (
            'Warning  Evicted  1m  kubelet  Container vllm exceeded its local ephemeral storage limit "20Gi". ',
            "Message:  Pod ephemeral local storage usage exceeds the total limit of containers 10Gi. ",
            'Warning  Evicted  1m  kubelet  Usage of EmptyDir volume "hf-cache" exceeds the limit "40Gi". ',
        )
    ]
    assert titles == [
        "Kubernetes evicted the pod: container vllm passed its own ephemeral-storage limit 20Gi",
        "Kubernetes evicted the pod: the pod passed the ephemeral-storage limit of its containers, 10Gi in all",
        "Kubernetes evicted the pod: emptyDir volume hf-cache passed its sizeLimit 40Gi",
    ]


def test_a_memory_eviction_asks_for_a_request_at_the_servers_peak():
    finding = _finding(
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 91148Ki. Container vllm was "
        "using 30Gi, request is 8Gi, has larger consumption of memory. "
    )
    assert finding.title.endswith("the node ran low on memory; container vllm used 30Gi (its request 8Gi)")
    assert "Guaranteed" in finding.actions[0]


def test_an_evicted_row_without_its_message_is_sent_to_describe():
    finding = _finding(HEADER, "vllm-7d9f8b6c5d-x2k4p   0/1     Evicted   0          3h")
    assert finding.title.startswith("Kubernetes evicted pod vllm-7d9f8b6c5d-x2k4p")
    assert "kubectl describe pod vllm-7d9f8b6c5d-x2k4p" in finding.actions[0]
    assert [e.kind for e in _facts(NODE_DISK).events] == [K.POD_STATUS]


def test_the_docker_daemons_failed_pull_is_dockers_with_docker_login_not_a_pull_secret():
    """`docker run` on a host: the daemon's words, a typo'd repository or tag, Docker Hub's rate limit."""
    typo = _finding(
        "docker: Error response from daemon: pull access denied for vllm/vllm-openia, repository does not exist or "
        "may require 'docker login': denied: requested access to the resource is denied."
    )
    assert typo.title == (
        "Docker cannot pull the server's image vllm/vllm-openia: no repository of that name, or a private one the "
        "client is not logged in to"
    )
    assert "docker login" in typo.actions[1] and "imagePullSecret" not in " ".join(typo.actions)
    tag = _finding(
        "docker: Error response from daemon: manifest for vllm/vllm-openai:0.11.0 not found: manifest unknown: "
        "manifest unknown."
    )
    assert tag.title.endswith("vllm/vllm-openai:0.11.0: the tag does not exist in that repository")
    assert "vllm/vllm-openai:v0.11.0" in tag.actions[0]  # vLLM's tags start with v


def test_docker_hubs_pull_rate_limit_is_named_under_either_runtime():
    limit = "the registry's pull rate limit was reached (Docker Hub limits unauthenticated and free accounts' pulls)"
    docker = _finding(
        "docker: Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase "
        "the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit."
    )
    kubelet = _finding(
        '  Warning  Failed  12s  kubelet  Failed to pull image "vllm/vllm-openai:v0.11.0": rpc error: code = Unknown '
        'desc = failed to pull and unpack image "docker.io/vllm/vllm-openai:v0.11.0": failed to copy: httpReadSeeker: '
        "failed open: unexpected status code https://registry-1.docker.io/v2/vllm/vllm-openai/manifests/sha256:ab: "
        "429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit."
    )
    assert docker.title == f"Docker cannot pull the server's image: {limit}"
    assert kubelet.title == f"Kubernetes cannot pull the server's image vllm/vllm-openai:v0.11.0: {limit}"
    assert "imagePullSecret" in kubelet.actions[1]


# The Kubernetes monitoring mixin's alert descriptions (alerts/apps_alerts.libsonnet), as Alertmanager's default
# template writes an annotation, and as its older releases and a webhook's JSON word them.
CRASH_LOOPING = ' - description = Pod llm/vllm-0 (vllm) is in waiting state (reason: "CrashLoopBackOff").'


def test_the_mixins_crash_looping_alert_names_the_pod_its_namespace_and_container_for_kubectl():
    finding = _finding("[FIRING:1] KubePodCrashLooping (vllm llm/vllm-0 kube-state-metrics)", CRASH_LOOPING)
    assert finding.title.startswith("pod llm/vllm-0's container keeps exiting")
    assert "`kubectl logs vllm-0 -n llm -c vllm --previous | servops triage --logs -`." in finding.actions[0]
    assert "kubectl describe pod vllm-0 -n llm |" in finding.actions[1]
    assert "KubePodCrashLooping" in finding.summary


def test_every_release_of_the_crash_looping_description_reads_the_same():
    for line in (
        "Pod llm/vllm-0 (vllm) is restarting 1.07 times / 10 minutes.",
        "Pod llm/vllm-0 (vllm) is restarting 0.35 times / 5 minutes.",
        'Pod llm/vllm-0 (vllm) is in waiting state (reason: "CrashLoopBackOff") on cluster prod-eu.',
        '{"description": "Pod llm/vllm-0 (vllm) is in waiting state (reason: \\"CrashLoopBackOff\\")."}',
    ):
        [event] = parse_lines([line]).events
        assert (event.pod_status, event.namespace, event.pod, event.container) == (
            "CrashLoopBackOff",
            "llm",
            "vllm-0",
            "vllm",
        ), line


def test_the_mixins_container_waiting_alert_reads_as_the_reason_it_names():
    pulling = _finding(
        "pod/vllm-0 in namespace llm on container vllm has been in waiting state for longer than 1 hour. (reason: "
        '"ImagePullBackOff").'
    )
    assert pulling.title.startswith("Kubernetes cannot pull the server's image")
    for line in (
        "pod/vllm-0 in namespace llm on container vllm has been in waiting state for longer than 1 hour. (reason: "
        '"PodInitializing").',
        "Pod llm/vllm-0 container vllm has been in waiting state for longer than 1 hour.",
    ):
        waiting = _finding(line)
        assert waiting.title == "pod llm/vllm-0's container is still waiting to start", line
        assert "kubectl describe pod vllm-0 -n llm | servops triage --logs -" in waiting.actions[0]


def test_the_mixins_not_ready_alert_says_both_ways_a_pod_stays_not_ready():
    finding = _finding("Pod llm/vllm-0 has been in a non-ready state for longer than 15 minutes.")
    assert finding.title.startswith("pod llm/vllm-0 has stayed not Ready")
    assert "`kubectl get pod vllm-0 -n llm`" in finding.actions[0]
    assert "kubectl logs vllm-0 -n llm | servops triage --logs -" in finding.actions[1]
    assert "/health" in finding.summary


def test_kubectl_logs_for_a_container_not_started_reads_as_what_it_waits_for():
    said = 'Error from server (BadRequest): container "vllm" in pod "vllm-0" is waiting to start: {}'
    assert _finding(said.format("ContainerCreating")).title == (
        "pod vllm-0 is ContainerCreating: its container is still being created"
    )
    assert _finding(said.format("trying and failing to pull image")).title.startswith(
        "Kubernetes cannot pull the server's image"
    )
    assert _finding(said.format("CreateContainerConfigError")).title == (
        "the pod references a Secret or ConfigMap that does not exist"
    )
    waiting = _finding(said.format("PodInitializing"))
    assert waiting.title == "pod vllm-0's container is still waiting to start"
    assert "kubectl describe pod vllm-0 | servops triage --logs -" in waiting.actions[0]


def test_docker_composes_exited_container_is_sent_to_its_log_with_what_the_code_means():
    # opea-project/GenAIExamples#1808 (a dependent service's words, verbatim) and compose's own line for the service
    dependency = _finding("dependency failed to start: container vllm-service exited (1)")
    assert dependency.title == "Docker's container vllm-service exited with code 1: why is in its log"
    assert "docker logs vllm-service 2>&1 | servops triage --logs -" in dependency.actions[0]
    assert "1 is an error the log ends with" in dependency.summary
    killed = _finding("vllm-1 exited with code 137")
    assert killed.title.startswith("Docker's container vllm-1 exited with code 137")
    assert "OOMKilled" in killed.summary and "OOMKilled" in killed.actions[1]


def test_a_tools_word_for_a_crashed_container_is_one_stop_not_a_restart_loop():
    # llm-d/llm-d-benchmark#668, verbatim: its harness's check of the pod it deployed
    finding = _finding("16:53:24 - ❌ Crashed container in pod: vllm-standalone-llama-3-1b-845945945-dljsw")
    assert finding.title == (
        "pod vllm-standalone-llama-3-1b-845945945-dljsw's container exited with an error code: why is in its log"
    )
    assert "keeps restarting" not in finding.title and "CrashLoopBackOff" not in finding.summary
    assert "`kubectl logs vllm-standalone-llama-3-1b-845945945-dljsw | servops triage --logs -`" in finding.actions[0]


def test_a_status_word_only_kubernetes_prints_is_a_pod_in_any_format():
    # huggingface/inference-benchmarker#30, verbatim: a dashboard's line, not kubectl's table
    named = _finding("Pod: inference-benchmarker-5dcf598989-k2bhw - CrashLoopBackOff")
    assert "inference-benchmarker-5dcf598989-k2bhw" in named.title and "CrashLoopBackOff" in named.title
    said = _finding("my vllm pod keeps going into CrashLoopBackOff after the upgrade")
    assert said.title.startswith("the pod's container")  # a plain word after "pod" is no pod's name
    assert not RULE_POD_STATUS.evaluate(_facts("INFO the request is Pending in the queue"))  # a word others print
