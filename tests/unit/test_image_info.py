"""docker's ``image inspect`` answer as a record: read once, narrowed, read by attribute."""

from __future__ import annotations

from release.adapters.image_info import ImageInfo

ANSWER = {
    "Id": "sha256:" + "a" * 64,
    "RepoTags": ["org/engine:v1"],
    "RepoDigests": ["org/engine@sha256:" + "b" * 64],
    "Parent": "sha256:" + "c" * 64,
    "Os": "linux",
    "Architecture": "arm64",
    "Variant": "v8",
    "Config": {
        "Labels": {"org.release.managed": "true"},
        "Entrypoint": ["python3", "-m", "engine"],
        "Cmd": ["--port", "8000"],
        "Env": ["PATH=/usr/bin"],
    },
    "RootFS": {"Type": "layers", "Layers": ["sha256:" + "d" * 64]},
}


def test_the_record_holds_what_docker_said() -> None:
    info = ImageInfo.of(ANSWER)
    assert info.id == ANSWER["Id"] and info.parent == ANSWER["Parent"]
    assert info.repo_tags == ("org/engine:v1",)
    assert info.repo_digests == ("org/engine@sha256:" + "b" * 64,)
    assert info.labels == {"org.release.managed": "true"}
    assert info.platform == "linux/arm64/v8"
    assert info.command == ["python3", "-m", "engine", "--port", "8000"]
    assert info.layers == ("sha256:" + "d" * 64,)


def test_what_docker_leaves_out_or_nulls_reads_as_empty() -> None:
    """docker 20.10 answers ``"RepoTags": null`` for an untagged image and ``"Labels":
    null`` for an image without any; another type than documented is not taken either."""
    info = ImageInfo.of(
        {
            "Id": "sha256:" + "a" * 64,
            "RepoTags": None,
            "RepoDigests": "not a list",
            "Config": {"Labels": None, "Entrypoint": None, "Cmd": ["serve", 7]},
            "Os": "linux",
            "Architecture": "amd64",
            "RootFS": None,
        }
    )
    assert (info.repo_tags, info.repo_digests, info.layers) == ((), (), ())
    assert info.labels == {} and info.command == ["serve"]
    assert info.platform == "linux/amd64"  # no variant: none spelt
    assert ImageInfo.of({"Config": "odd"}) == ImageInfo("")
    assert ImageInfo.of({"Id": 7, "Config": {"Labels": {"a": 1, "b": "2"}}}).labels == {"b": "2"}
