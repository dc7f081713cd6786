/**
 * The HTML page of a coding sheet: the sample's parameters, the allowed codes, then one card per
 * instance. Self-contained (inline CSS, no script; a Content-Security-Policy forbids the rest);
 * every text is escaped, so dataset and model text stays inert.
 */
import type { Code, Session, Sheet, SheetRow } from "../ErrorSheet.js"
import { visibleControls } from "../Exports.js"

const e = (text: string): string =>
  visibleControls(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;")

const style = `
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #1d1d1f; margin: 0; background: #f4f4f6; }
main { max-width: 980px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 22px; margin: 0 0 8px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.muted { color: #555; font-size: 13px; }
table { border-collapse: collapse; font-size: 13px; background: #fff; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #ececf0; }
.card { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 12px 16px; margin: 14px 0; }
.card h3 { font-size: 15px; margin: 0 0 6px; }
.label { font-weight: 600; color: #333; }
.gold { border-left: 4px solid #3a7d44; padding-left: 8px; } .inferred { border-left: 4px solid #b5523b; padding-left: 8px; }
.request { white-space: pre-wrap; background: #f8f8fa; padding: 6px 8px; border-radius: 4px; max-height: 14em; overflow: auto; }
.code { margin-top: 8px; padding-top: 6px; border-top: 1px dashed #ccc; }
code { font-size: 12px; background: #f0f0f2; padding: 0 3px; border-radius: 3px; } td code { white-space: nowrap; }
`

const sessions = (list: ReadonlyArray<Session>): string =>
  list.length === 0
    ? `<span class="muted">none</span>`
    : list
        .map((s) =>
          s.factor === undefined ? `${s.position}` : `${s.position} <span class="muted">(${e(s.factor)})</span>`
        )
        .join("; ")

const card = (r: SheetRow): string =>
  [
    `<section class="card" id="row-${r.row}">`,
    `<h3>#${r.row} · ${e(r.instance)} <span class="muted">${e(r.type)} · ${e(r.cellName)} · ${e(r.model)} · F1 ${r.f1.toFixed(3)}</span></h3>`,
    `<p class="muted"><a href="${e(r.link)}">open the transcript in the viewer</a></p>`,
    `<p><span class="label">Request</span></p><div class="request">${e(r.request)}</div>`,
    `<p class="gold"><span class="label">Gold preference</span>${r.factor === "" ? "" : ` <span class="muted">(factor: ${e(r.factor)})</span>`}<br>${e(r.gold)}</p>`,
    r.checklist.length === 0 ? "" : `<ul class="muted">${r.checklist.map((c) => `<li>${e(c)}</li>`).join("")}</ul>`,
    `<p class="inferred"><span class="label">Inferred preference</span><br>${r.inferred === "" ? `<span class="muted">(empty)</span>` : e(r.inferred)}</p>`,
    `<p><span class="label">Sessions</span> relevant: ${sessions(r.relevant)} · stale: ${sessions(r.stale)} · given to the model: ${sessions(r.selected)}</p>`,
    `<p class="code"><span class="label">code</span> ______ <span class="label">note</span> ______ <span class="muted">(fill row ${r.row} of the CSV)</span></p>`,
    `</section>`
  ].join("\n")

export const page = (sheet: Sheet, codes: ReadonlyArray<Code>): string => {
  const c = sheet.counts
  const title = `Error coding sheet: ${sheet.model}, F1 below ${sheet.options.below}`
  return [
    "<!DOCTYPE html>",
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>${e(title)}</title><style>${style}</style></head><body><main>`,
    `<h1>${e(title)}</h1>`,
    `<p class="muted">Run <code>${e(sheet.run)}</code>, model <code>${e(sheet.model)}</code> (${c.cells} cell${c.cells === 1 ? "" : "s"}, ${c.lines} result lines: ${c.failed} failed, ${c.unscored} without an F1, ${c.above} at or above ${sheet.options.below}). ` +
      `${sheet.rows.length} of the ${c.eligible} inferences with per-instance F1 (<code>inference.f1</code>) below ${sheet.options.below}, drawn with seed ${sheet.options.seed} (n = ${sheet.options.n}; the first k rows are a sample of k).` +
      `${sheet.heuristic ? " The F1 is heuristic (an offline matcher), not the paper's metric." : ""}</p>`,
    `<p class="muted">Code each row in the CSV's <code>code</code> column with one code below (one per row; leave it empty while not coded), and add a <code>note</code> when it helps; then <code>cupid-lab errors tabulate --sheet &lt;the csv&gt;</code>. ` +
      `Links open the local viewer at ${e(sheet.viewer.url)}${sheet.viewer.note === undefined ? ` over <code>${e(sheet.viewer.root)}</code>` : `: ${e(sheet.viewer.note)}`}.` +
      `${sheet.sessionsNote === undefined ? "" : ` Note: ${e(sheet.sessionsNote)}.`}</p>`,
    `<h2>Codes</h2>`,
    `<table><tr><th>code</th><th>meaning</th><th>name from</th></tr>`,
    ...codes.map(
      (x) => `<tr><td><code>${e(x.code)}</code></td><td>${e(x.meaning)}</td><td class="muted">${e(x.source)}</td></tr>`
    ),
    `</table>`,
    `<h2>Instances</h2>`,
    sheet.rows.length === 0 ? `<p>No inference of this model is below the threshold.</p>` : "",
    ...sheet.rows.map(card),
    "</main></body></html>",
    ""
  ].join("\n")
}
