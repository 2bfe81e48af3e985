"""OP-7.60: Ray Serve's controller waiting to place a replica, read for its GPUs against the cluster's free ones."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_ray_placement
from rules.evaluate import evaluate
from rules.facts import Facts

WAITING = (
    "Deployment '{name}' in application 'llms' has 1 replicas that have taken more than 30s to be scheduled. This may "
    "be due to waiting for the cluster to auto-scale or for a runtime environment to be installed. Resources required "
    "for each replica: {required}, total resources available: {available}. Use `ray status` for more details."
)


def _finding(line: str):
    [finding] = op7_ray_placement.RULE.evaluate(Facts(events=parse_lines([line]).events))
    return finding


def test_a_cluster_with_no_gpu_at_all_is_sent_to_start_its_nodes_with_them():
    line = WAITING.format(name="LLMServer:qwen", required='[{"CPU": 1.0, "GPU": 1.0}]', available="{}")
    finding = _finding(line)
    assert (
        finding.title
        == "Ray cannot place a replica of Serve deployment LLMServer:qwen: one needs 1 GPU, the cluster has 0 GPUs free"
    )
    assert "nvidia.com/gpu limit" in finding.actions[1] and "--num-gpus" in finding.actions[1]
    assert evaluate(Facts(events=parse_lines([line]).events)).findings[0].rule == "OP-7.60"


def test_a_replicas_bundles_are_summed_and_set_against_the_gpus_free():
    """A tensor-parallel engine's placement group: one GPU bundle per worker."""
    required = '[{"CPU": 1.0, "GPU": 1.0}, {"GPU": 1.0}, {"GPU": 1.0}, {"GPU": 1.0}]'
    finding = _finding(WAITING.format(name="LLMServer:qwen", required=required, available='{"CPU": 30.0, "GPU": 2.0}'))
    assert finding.title.endswith("one needs 4 GPUs, the cluster has 2 GPUs free")
    assert "tensor_parallel_size × pipeline_parallel_size" in finding.actions[1]


def test_kuberays_yaml_quoting_of_the_message_is_read_too():
    """`kubectl describe rayservice` prints the message YAML-quoted, its quotes doubled."""
    line = (
        "message: 'Deployment ''LLMServer:qwen2_5-7b-instruct'' in application ''llms'' has 1 replicas that have taken "
        "more than 30s to be scheduled. This may be due to waiting for the cluster to auto-scale or for a runtime "
        'environment to be installed. Resources required for each replica: [{"CPU": 1.0, "GPU": 1.0}], total '
        "resources available: {}. Use `ray status` for more details.'"
    )
    assert _finding(line).title.startswith(
        "Ray cannot place a replica of Serve deployment LLMServer:qwen2_5-7b-instruct"
    )


def test_vllms_own_wait_for_its_placement_group_names_the_gpus_it_asks_for():
    # ray-project/kuberay#3414, verbatim: TP 4 across KubeRay worker pods, one of them stuck in Init
    line = (
        "Waiting for creating a placement group of specs for 150 seconds. specs=[{'GPU': 1.0, 'node:xxx': 0.001}, "
        "{'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` to see if you have enough resources, and make "
        "sure the IP addresses used by ray cluster are the same as VLLM_HOST_IP environment variable specified in "
        "each node if you are running on a multi-node."
    )
    finding = _finding(line)
    assert finding.title == (
        "Ray cannot reserve vLLM's placement group of 4 GPUs (one per worker): vLLM has waited for 150 s and starts "
        "no worker until it can"
    )
    assert "kubectl get pods" in finding.actions[0] and "VLLM_HOST_IP" in finding.actions[2]


def test_rays_autoscaler_on_a_gpu_bundle_it_cannot_place_is_vllms_placement_group_wait():
    # vllm#13388, verbatim: DeepSeek-R1 at TP 16 on a Ray cluster on Kubernetes
    line = "Error: No available node types can fulfill resource request {'node:10.61.0.27': 0.001, 'GPU': 1.0}"
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.60" and "placement group" in top.title
    assert top.evidence[0].name == "Ray's autoscaler's unplaced bundle"


def test_the_autoscalers_line_wrapped_before_its_request_is_the_same_wait():
    # eugr/spark-vllm-docker#227, verbatim: the resource request continued on the next line of the paste
    line = "(EngineCore pid=630) [autoscaler] Error: No available node types can fulfill resource request"
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.60" and "placement group" in top.title


def test_a_frameworks_own_count_of_the_clusters_gpus_names_both_numbers():
    # NVIDIA-NeMo/RL PR #271, verbatim: NeMo-RL's RayVirtualCluster before it makes its placement groups
    line = "Not enough GPUs available. Requested 16 GPUs, but only 8 are available in the cluster."
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-7.60" and top.title.startswith("the job asks Ray for 16 GPUs, and the cluster has 8 GPUs")
    assert "ray status" in top.actions[0] and "8 GPUs at most" in top.actions[1]
