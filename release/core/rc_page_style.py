"""The rc page's look: one inline stylesheet, its only style (the page's
Content-Security-Policy allows inline style and nothing else), in GitHub's palette so the
page sits well beside the release it is attached to. Pure data."""

from __future__ import annotations

__all__ = ["STYLE"]

STYLE = """
:root{--ink:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--good:#1a7f37;
--good-bg:#dafbe1;--bad:#cf222e;--bad-bg:#ffebe9;--warn:#9a6700;--warn-bg:#fff8c5;
--quiet:#59636e;--quiet-bg:#eff2f5;--accent:#0969da}
*{box-sizing:border-box}
body{margin:0;border-top:4px solid var(--accent);background:#fff;color:var(--ink);font:14px/1.5 -apple-system,"Segoe UI",
"Noto Sans",Helvetica,Arial,sans-serif}
header,section,footer{max-width:1180px;margin:0 auto;padding:0 28px}
header{padding-top:28px;padding-bottom:4px}
.kind{margin:0;color:var(--muted);text-transform:uppercase;letter-spacing:.08em;font-size:12px}
h1{margin:4px 0 12px;font-size:28px;font-weight:600}
h1 .image{color:var(--muted);font-weight:400}
h2{font-size:18px;margin:28px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:18px 0 6px}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}
.facts dt{color:var(--muted)}.facts dd{margin:0}
.promoted{font-weight:600}
code,pre{font-family:ui-monospace,SFMono-Regular,"DejaVu Sans Mono",Menlo,Consolas,monospace;
font-size:12.5px}
code{background:var(--soft);padding:1px 4px;border-radius:4px;overflow-wrap:anywhere}
pre{margin:4px 0 10px;padding:8px 12px;background:var(--soft);border:1px solid var(--line);
border-radius:6px;white-space:pre-wrap;word-break:break-all}
pre code{background:none;padding:0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:7px 10px;border-bottom:1px solid var(--line)}
thead th{background:var(--soft);font-weight:600;font-size:12px;color:var(--muted);
text-transform:uppercase;letter-spacing:.04em}
tbody th{font-weight:600}
.sub,.reason,.count,.label,.tags{color:var(--muted);font-size:12px;font-weight:400}
.label{margin:6px 0 0}
.badge{display:inline-block;padding:0 8px;border-radius:10px;font-size:12px;font-weight:600;
line-height:20px;white-space:nowrap}
.good{color:var(--good);background:var(--good-bg)}.bad{color:var(--bad);background:var(--bad-bg)}
.warn{color:var(--warn);background:var(--warn-bg)}.quiet{color:var(--quiet);background:var(--quiet-bg)}
.checks{margin:4px 0 0;padding-left:16px;font-size:12px;color:var(--muted)}
.summary{color:var(--muted)}
.notices{color:var(--warn);font-size:13px}
.variant{margin-bottom:8px}
.platform-image{margin:8px 0 0 6px;padding-left:14px;border-left:2px solid var(--line)}
.label b{color:var(--ink);font-size:13px}
.evidence{margin:0 0 8px;padding-left:16px;font-size:12px;color:var(--muted)}
.matrix th.variant,.matrix td.platform,.matrix td.accelerator{white-space:nowrap}
.matrix td.smoke{min-width:180px}
.timings td{font-variant-numeric:tabular-nums}
.notes h3{font-size:14px}
.notes ul{padding-left:20px}
.notes a{color:var(--accent)}
footer{margin-top:32px;padding-bottom:28px;color:var(--muted);font-size:12px}
footer p{margin:0;padding-top:12px;border-top:1px solid var(--line)}
"""
