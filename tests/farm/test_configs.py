"""Cluster configs parse and say what the docs (README, docs/farm.md) say: the launcher YAML validates against Ray's own
schema (CPU head, H100 GPU workers); the KubeRay manifest is a ray.io/v1 RayCluster for this Ray
version with a GPU worker group and a head that takes no GPU work. Plus the job's config and rows."""

from __future__ import annotations

import json
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


def test_kuberay_manifest_is_a_raycluster_with_a_gpu_group():
    docs = list(yaml.safe_load_all((CONFIGS / "kuberay.yaml").read_text()))
    assert len(docs) == 1
    rc = docs[0]
    assert (rc["apiVersion"], rc["kind"]) == ("ray.io/v1", "RayCluster")
    spec = rc["spec"]
    assert spec["rayVersion"] == ray.__version__
    assert spec["headGroupSpec"]["rayStartParams"]["num-gpus"] == "0"
    groups = spec["workerGroupSpecs"]
    assert groups
    for g in groups:
        assert {"groupName", "replicas", "minReplicas", "maxReplicas", "rayStartParams", "template"} <= set(g)
        [container] = g["template"]["spec"]["containers"]
        assert int(container["resources"]["limits"]["nvidia.com/gpu"]) >= 1
        env = {e["name"]: e for e in container["env"]}
        assert env["RAY_AUTH_MODE"]["value"] == "token" and "secretKeyRef" in env["RAY_AUTH_TOKEN"]["valueFrom"]


def test_the_docs_explain_both_configs_and_submission():
    text = (REPO / "README.md").read_text() + (REPO / "docs" / "farm.md").read_text()  # README points at docs/
    for needle in ("ray_cluster/configs/cluster.yaml", "ray_cluster/configs/kuberay.yaml", "ray job submit",
                   "RAY_AUTH_MODE=token", "kgym demo", "KGYM_SUBMIT_DIR", "--set farm.workers=4"):
        assert needle in text, needle
