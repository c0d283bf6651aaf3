"""Cluster configs parse and say what the docs (README, docs/farm.md, docs/cluster.md) say: the
launcher YAML validates against Ray's own schema (a CPU head, an autoscaling H100 GPU group, Ray's
image with README's install step); the KubeRay manifest is a ray.io/v1 RayCluster for this Ray
version with in-tree autoscaling, a GPU worker group, a head that takes no GPU work and the image
the checked-in Dockerfile builds from the same Ray image; every node exports Ray's metrics, and
Prometheus reads the service-discovery file where Ray writes it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from farm_helpers import REPO

yaml = pytest.importorskip("yaml")
ray = pytest.importorskip("ray")
CONFIGS = REPO / "ray_cluster" / "configs"


def test_cluster_launcher_yaml_validates_against_rays_schema():
    import jsonschema
    import ray.autoscaler

    schema = json.loads((Path(ray.autoscaler.__file__).parent / "ray-schema.json").read_text())
    cfg = yaml.safe_load((CONFIGS / "cluster.yaml").read_text())
    jsonschema.validate(cfg, schema)
    types = cfg["available_node_types"]
    head = types[cfg["head_node_type"]]
    assert head["resources"].get("GPU", 0) == 0
    gpu_types = [t for name, t in types.items() if name != cfg["head_node_type"]]
    assert gpu_types and all(t["resources"]["GPU"] >= 1 for t in gpu_types)
    assert any("H100" in (CONFIGS / "cluster.yaml").read_text() for _ in [0])
    assert all("RAY_AUTH_MODE=token" in c for c in cfg["head_start_ray_commands"] if "ray start" in c)
    # autoscaling: the GPU group can grow past its minimum, within the cluster's max_workers
    assert all(t["min_workers"] < t["max_workers"] <= cfg["max_workers"] for t in gpu_types)
    # the image the Dockerfile (and so the KubeRay pods) starts from, and README's install step
    assert cfg["docker"]["image"] == _dockerfile_base() == f"rayproject/ray:{ray.__version__}-py311-gpu"
    assert "--gpus all" in cfg["docker"]["worker_run_options"]
    assert any(re.search(r"pip install .*-e '~/kgym\[farm\]'", c) for c in cfg["setup_commands"])
    starts = [c for c in cfg["head_start_ray_commands"] + cfg["worker_start_ray_commands"] if "ray start" in c]
    assert len(starts) == 2 and all("--metrics-export-port=8090" in c for c in starts)
    assert "--autoscaling-config" in starts[0]


def _dockerfile_base() -> str:
    text = (CONFIGS / "Dockerfile").read_text()
    [base] = re.findall(r"^FROM (\S+)$", text, re.M)
    assert re.search(r"^RUN pip install .*-e '/home/ray/kgym\[farm\]'$", text, re.M)
    return base


def test_kuberay_manifest_is_a_raycluster_with_a_gpu_group():
    docs = list(yaml.safe_load_all((CONFIGS / "kuberay.yaml").read_text()))
    assert len(docs) == 1
    rc = docs[0]
    assert (rc["apiVersion"], rc["kind"]) == ("ray.io/v1", "RayCluster")
    spec = rc["spec"]
    assert spec["rayVersion"] == ray.__version__
    assert spec["enableInTreeAutoscaling"] is True and spec["autoscalerOptions"]["idleTimeoutSeconds"] > 0
    head = spec["headGroupSpec"]
    assert head["rayStartParams"]["num-gpus"] == "0" and head["rayStartParams"]["metrics-export-port"] == "8090"
    [head_container] = head["template"]["spec"]["containers"]
    groups = spec["workerGroupSpecs"]
    assert groups
    for g in groups:
        assert {"groupName", "replicas", "minReplicas", "maxReplicas", "rayStartParams", "template"} <= set(g)
        assert g["minReplicas"] <= g["replicas"] <= g["maxReplicas"] and g["minReplicas"] < g["maxReplicas"]
        assert g["rayStartParams"]["metrics-export-port"] == "8090"
        [container] = g["template"]["spec"]["containers"]
        assert int(container["resources"]["limits"]["nvidia.com/gpu"]) >= 1
        assert container["image"] == head_container["image"]  # one image, built from the Dockerfile
        env = {e["name"]: e for e in container["env"]}
        assert env["RAY_AUTH_MODE"]["value"] == "token" and "secretKeyRef" in env["RAY_AUTH_TOKEN"]["valueFrom"]
    docs = (REPO / "docs" / "cluster.md").read_text()
    image = head_container["image"]
    assert f"docker build -f ray_cluster/configs/Dockerfile -t {image} ." in docs, image
    assert _dockerfile_base().startswith("rayproject/ray:" + ray.__version__)


def test_prometheus_reads_rays_service_discovery_file():
    from ray._private.ray_constants import PROMETHEUS_SERVICE_DISCOVERY_FILE

    cfg = yaml.safe_load((REPO / "dashboards" / "prometheus.yml").read_text())
    jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
    [sd] = jobs["ray"]["file_sd_configs"]
    assert sd["files"] == [f"/tmp/ray/{PROMETHEUS_SERVICE_DISCOVERY_FILE}"]  # Ray's default temp dir


def test_the_docs_explain_both_configs_and_submission():
    text = (REPO / "README.md").read_text() + (REPO / "docs" / "farm.md").read_text()  # README points at docs/
    for needle in ("ray_cluster/configs/cluster.yaml", "ray_cluster/configs/kuberay.yaml", "ray job submit",
                   "RAY_AUTH_MODE=token", "kgym demo", "KGYM_SUBMIT_DIR", "--set farm.workers=4"):
        assert needle in text, needle
    cluster = (REPO / "docs" / "cluster.md").read_text()
    for needle in ("ray up ray_cluster/configs/cluster.yaml", "kubectl apply -f ray_cluster/configs/kuberay.yaml",
                   "ray job submit", "RAY_AUTH_MODE=token", "min_workers", "max_workers", "request_resources",
                   "## What was run", "## What was not run"):
        assert needle in cluster, needle
