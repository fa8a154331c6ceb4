/* The HTML page of `tally bench --html FILE`: one self-contained file (inline SVG, no scripts,
 * no network), written as well-formed XHTML so that any XML parser can check it. */
#include "lab_internal.h"
#include "tally.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *palette[] = { "#1f66b5", "#cf4f35", "#2e8f4d", "#d9901f", "#7a4fb5", "#17a2b8",
                                 "#8c564b", "#c2458f", "#0b8a6f", "#9a9a1f", "#393b79", "#637939" };
#define NPALETTE (sizeof palette / sizeof palette[0])

static int same_family(const lab_variant *v, int scan)
{
    int is_scan = v->kind == LAB_SCAN || v->kind == LAB_CEIL_COPY;
    return is_scan == scan;
}

/* GB/s against size, log-log, one line per variant; ceilings dashed. */
static void plot(FILE *f, const lab_report *rep, const lab_backend *be, int scan)
{
    const double X0 = 70, X1 = 720, Y0 = 30, Y1 = 330, WIDTH = 1000, HEIGHT = 380;
    double nmin = INFINITY, nmax = 0, gmin = INFINITY, gmax = 0;
    for (size_t r = 0; r < rep->nrows; ++r) {
        const lab_row *row = &rep->rows[r];
        if (row->backend != be || !same_family(row->variant, scan) || !(row->seconds > 0)) continue;
        if (row->n < nmin) nmin = (double)row->n;
        if (row->n > nmax) nmax = (double)row->n;
        if (row->gbps < gmin) gmin = row->gbps;
        if (row->gbps > gmax) gmax = row->gbps;
    }
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"system-ui, sans-serif\" font-size=\"12\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fbfaf7\"/>\n", WIDTH, HEIGHT);
    if (nmax == 0) {
        fprintf(f, "<text x=\"20\" y=\"40\" fill=\"#555\">No timings in this run (--validate-only or no sizes).</text>\n</svg>\n");
        return;
    }
    double lx0 = log2(nmin), lx1 = log2(nmax);
    if (lx1 - lx0 < 1) { lx0 -= 1; lx1 += 1; }
    double ly0 = floor(log10(gmin)), ly1 = ceil(log10(gmax));
    if (ly1 - ly0 < 1) ly1 = ly0 + 1;
#define PXX(n) (X0 + (log2(n) - lx0) / (lx1 - lx0) * (X1 - X0))
#define PXY(g) (Y1 - (log10(g) - ly0) / (ly1 - ly0) * (Y1 - Y0))
    /* Grid. */
    for (double e = ly0; e <= ly1 + 1e-9; e += 1) {
        for (int m = 1; m < 10 && e + log10(m) <= ly1 + 1e-9; ++m) {
            double y = PXY(pow(10, e) * m);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", X0, y, X1, y,
                    m == 1 ? "#cfc8bb" : "#ece7de");
        }
        double y = PXY(pow(10, e));
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">%g</text>\n", X0 - 6, y + 4, pow(10, e));
    }
    for (int k = (int)ceil(lx0); k <= (int)floor(lx1); k += (lx1 - lx0 > 12 ? 2 : 1)) {
        double x = PXX(pow(2, k));
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ece7de\"/>\n", x, Y0, x, Y1);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555\">2^%d</text>\n", x, Y1 + 18, k);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999\"/>\n", X0, Y0, X1 - X0, Y1 - Y0);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">elements (log scale)</text>\n", (X0 + X1) / 2, Y1 + 38);
    fprintf(f, "<text x=\"16\" y=\"%.1f\" transform=\"rotate(-90 16 %.1f)\" text-anchor=\"middle\" fill=\"#333\">GB/s (log scale)</text>\n",
            (Y0 + Y1) / 2, (Y0 + Y1) / 2);
    /* One line per variant. */
    int colour = 0, legend = 0;
    for (size_t k = 0; k < be->count; ++k) {
        const lab_variant *v = &be->variants[k];
        if (!same_family(v, scan)) continue;
        int ceiling = v->kind == LAB_CEIL_READ || v->kind == LAB_CEIL_COPY;
        int one_core = ceiling && strstr(v->name, "-1t") != NULL;
        const char *c = ceiling ? (one_core ? "#8a8a8a" : "#111") : v->expect_wrong ? "#b22" : palette[colour++ % NPALETTE];
        int points = 0;
        for (size_t r = 0; r < rep->nrows; ++r) {
            const lab_row *row = &rep->rows[r];
            if (row->backend == be && row->variant == v && row->seconds > 0) ++points;
        }
        if (!points) continue;
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"", c,
                ceiling ? "2.5" : "1.8", ceiling ? " stroke-dasharray=\"7 4\"" : v->expect_wrong ? " stroke-dasharray=\"2 3\"" : "");
        for (size_t r = 0; r < rep->nrows; ++r) {
            const lab_row *row = &rep->rows[r];
            if (row->backend == be && row->variant == v && row->seconds > 0)
                fprintf(f, "%.1f,%.1f ", PXX((double)row->n), PXY(row->gbps));
        }
        fputs("\"/>\n", f);
        for (size_t r = 0; r < rep->nrows; ++r) {
            const lab_row *row = &rep->rows[r];
            if (row->backend != be || row->variant != v || !(row->seconds > 0)) continue;
            double x = PXX((double)row->n), y = PXY(row->gbps);
            if (row->verdict == LAB_WRONG || row->verdict == LAB_WRONG_EXPECTED || row->verdict == LAB_NOT_CAUGHT)
                fprintf(f, "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"#b22\" stroke-width=\"2\"/>\n", x - 4, y - 4);
            else
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", x, y, c);
        }
        double ly = Y0 + 8 + legend * 20;
        fprintf(f, "<line x1=\"740\" y1=\"%.1f\" x2=\"770\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"%s/>\n", ly, ly, c,
                ceiling ? "2.5" : "2", ceiling ? " stroke-dasharray=\"7 4\"" : v->expect_wrong ? " stroke-dasharray=\"2 3\"" : "");
        fprintf(f, "<text x=\"778\" y=\"%.1f\" fill=\"#222\">", ly + 4);
        lab_xml_escape(f, v->name);
        if (v->expect_wrong) fputs(" (WRONG on purpose)", f);
        fputs("</text>\n", f);
        ++legend;
    }
#undef PXX
#undef PXY
    fputs("</svg>\n", f);
}

static void fmt_seconds(double s, char *buf, size_t size)
{
    if (s < 0) snprintf(buf, size, "-");
    else if (s < 1e-6) snprintf(buf, size, "%.1f ns", s * 1e9);
    else if (s < 1e-3) snprintf(buf, size, "%.2f &#181;s", s * 1e6);
    else if (s < 1) snprintf(buf, size, "%.2f ms", s * 1e3);
    else snprintf(buf, size, "%.3f s", s);
}

static void table(FILE *f, const lab_report *rep, const lab_backend *be, int scan)
{
    fputs("<table>\n<thead><tr><th>variant</th><th>size</th><th>time</th><th>elements/s</th><th>GB/s</th>"
          "<th>% of ceiling</th><th>check</th><th>error / &#931;|x|</th></tr></thead>\n<tbody>\n", f);
    uint64_t last = UINT64_MAX;
    for (size_t r = 0; r < rep->nrows; ++r) {
        const lab_row *row = &rep->rows[r];
        if (row->backend != be || !same_family(row->variant, scan)) continue;
        const char *cls = row->verdict == LAB_WRONG || row->verdict == LAB_NOT_CAUGHT || row->verdict == LAB_FAILED ? "bad"
                        : row->verdict == LAB_WRONG_EXPECTED ? "caught"
                        : row->verdict == LAB_CEILING ? "ceil" : row->verdict == LAB_UNBOUNDED ? "unbounded" : "ok";
        char nb[32], tb[32], eb[32];
        fprintf(f, "<tr class=\"%s%s\"><td>", cls, row->n != last && last != UINT64_MAX ? " first" : "");
        last = row->n;
        lab_xml_escape(f, row->variant->name);
        fmt_seconds(row->seconds, tb, sizeof tb);
        fprintf(f, "</td><td>%s</td><td>%s</td>", lab_commas(row->n, nb, sizeof nb), tb);
        if (row->seconds > 0) fprintf(f, "<td>%.3g G</td><td>%.2f</td>", (double)row->n / row->seconds / 1e9, row->gbps);
        else fputs("<td>-</td><td>-</td>", f);
        if (row->pct_ceiling >= 0) fprintf(f, "<td>%.1f</td>", row->pct_ceiling);
        else fputs("<td>-</td>", f);
        fputs("<td>", f);
        lab_xml_escape(f, lab_verdict_name(row->verdict));
        if (isnan(row->error)) snprintf(eb, sizeof eb, "-");
        else snprintf(eb, sizeof eb, "%.2e", row->error);
        fprintf(f, "</td><td>%s", eb);
        if (row->note[0]) {
            fputs(" <span class=\"note\">", f);
            lab_xml_escape(f, row->note);
            fputs("</span>", f);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
}

static int figure(FILE *f, const char *caption, int rc, const char *why)
{
    if (rc) {
        fputs("<p class=\"bad\">picture failed: ", f);
        lab_xml_escape(f, why);
        fputs("</p>\n</div>\n", f);
        return -1;
    }
    fputs("<p class=\"caption\">", f);
    lab_xml_escape(f, caption);
    fputs("</p>\n</div>\n", f);
    return 0;
}

int lab_write_html(const char *path, const lab_report *rep, char *why)
{
    char tmp[4096];
    FILE *f = lab_open_tmp(path, tmp, sizeof tmp);
    if (!f) { snprintf(why, LAB_WHY, "cannot create a file next to %s", path); return -1; }
    fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
          "<meta charset=\"utf-8\"/>\n<title>tally bench</title>\n<style>\n"
          "body { margin: 24px auto; max-width: 1040px; padding: 0 16px; background: #f7f4ee; color: #222;"
          " font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; }\n"
          "h1 { font-size: 26px; margin: 0 0 4px; } h2 { margin-top: 36px; border-bottom: 2px solid #d9d2c3; }\n"
          ".meta { color: #555; } code { font-family: ui-monospace, 'DejaVu Sans Mono', monospace; }\n"
          "table { border-collapse: collapse; margin: 10px 0 18px; font-size: 12.5px; background: #fffdf9; }\n"
          "th, td { padding: 3px 9px; text-align: right; border-bottom: 1px solid #ece7de; white-space: nowrap; }\n"
          "th { background: #ebe6dc; } td:first-child, th:first-child { text-align: left; font-family: ui-monospace, monospace; }\n"
          "tr.first td { border-top: 2px solid #d3ccbd; } tr.bad td { color: #b22; font-weight: bold; }\n"
          "tr.caught td { color: #8a2b2b; } tr.ceil td { color: #555; font-style: italic; }\n"
          "tr.unbounded td { color: #9a6a00; }\n"
          ".note { color: #777; font-weight: normal; font-size: 11px; white-space: normal; display: block; max-width: 360px; margin-left: auto; }\n"
          ".fig { margin: 14px 0 26px; } .fig svg { max-width: 100%; height: auto; border: 1px solid #e2dccf; }\n"
          ".caption { color: #555; margin: 4px 0; } .bad { color: #b22; }\n"
          ".verdict { padding: 8px 12px; border-radius: 6px; display: inline-block; }\n"
          ".pass { background: #dcefe1; } .fail { background: #f6dcd6; }\n"
          "summary { cursor: pointer; color: #1f4f8a; margin: 6px 0; }\n"
          "</style>\n</head>\n<body>\n<h1>tally bench</h1>\n", f);
    fputs("<p class=\"meta\">", f);
    lab_xml_escape(f, rep->date);
    fputs(" &#183; tally ", f);
    lab_xml_escape(f, tally_version());
    fputs(" &#183; <code>", f);
    lab_xml_escape(f, rep->command);
    if (rep->load[0]) {
        fputs("</code><br/>", f);
        lab_xml_escape(f, rep->load);
        fputs(" (other work on the machine shows up as noise).<code>", f);
    }
    fprintf(f, "</code><br/>f32 %s data (seed %llu). Each variant is checked against an exact reference "
               "(a superaccumulator; double-double running sums for scans) before it is timed: exact "
               "variants bit for bit, the others within the worst-case error bound of their algorithm "
               "(&#8220;no bound&#8221; where that bound exceeds the answer itself); the "
               "time is the fastest of repeated calls (the JSON output also has the median).</p>\n", rep->data_name, (unsigned long long)rep->seed);
    int wrong = 0, caught = 0, failed = 0;
    for (size_t r = 0; r < rep->nrows; ++r) {
        wrong += rep->rows[r].verdict == LAB_WRONG || rep->rows[r].verdict == LAB_NOT_CAUGHT;
        caught += rep->rows[r].verdict == LAB_WRONG_EXPECTED;
        failed += rep->rows[r].verdict == LAB_FAILED;
    }
    fprintf(f, "<p class=\"verdict %s\">%s: %d unexpected WRONG, %d failed; the deliberately incorrect "
               "variant was caught %d time%s.</p>\n", wrong || failed ? "fail" : "pass",
            wrong || failed ? "Problems" : "All variants correct", wrong, failed, caught, caught == 1 ? "" : "s");

    for (int b = 0; b < rep->nbackends; ++b) {
        const lab_backend *be = rep->backends[b];
        fputs("<h2>", f);
        lab_xml_escape(f, be->name);
        fputs(": ", f);
        lab_xml_escape(f, rep->descriptions[b]);
        fputs("</h2>\n", f);
        for (int scan = 0; scan <= 1; ++scan) {
            int any = 0;
            for (size_t r = 0; r < rep->nrows; ++r)
                any |= rep->rows[r].backend == be && same_family(rep->rows[r].variant, scan);
            if (!any) continue;
            fprintf(f, "<h3>%s</h3>\n<div class=\"fig\">\n", scan ? "Inclusive sum scans of f32 (bytes: read n + write n)"
                                                                   : "Sums of f32 (bytes: read n)");
            plot(f, rep, be, scan);
            fprintf(f, "<p class=\"caption\">Throughput against size; the dashed black line is the %s "
                       "measured in the same run on all threads, the grey one on one core. A cross marks a WRONG answer.</p>\n</div>\n",
                    scan ? "copy ceiling (memcpy)" : "read ceiling (a tuned read loop)");
            /* Long sweeps fold their tables away (a <details> needs no script); short runs show them. */
            size_t rows = 0;
            uint64_t sizes_seen[64];
            int nsizes = 0;
            for (size_t r = 0; r < rep->nrows; ++r) {
                if (rep->rows[r].backend != be || !same_family(rep->rows[r].variant, scan)) continue;
                ++rows;
                int seen = 0;
                for (int k = 0; k < nsizes; ++k) seen |= sizes_seen[k] == rep->rows[r].n;
                if (!seen && nsizes < 64) sizes_seen[nsizes++] = rep->rows[r].n;
            }
            fprintf(f, "<details%s><summary>the table: %zu rows, %d size%s</summary>\n", nsizes <= 6 ? " open=\"open\"" : "",
                    rows, nsizes, nsizes == 1 ? "" : "s");
            table(f, rep, be, scan);
            fputs("</details>\n", f);
        }
        fputs("<h3>The variants</h3>\n<table>\n<thead><tr><th>variant</th><th style=\"text-align:left\">what it does</th></tr></thead>\n<tbody>\n", f);
        for (size_t k = 0; k < be->count; ++k) {
            fputs("<tr><td>", f);
            lab_xml_escape(f, be->variants[k].name);
            fputs("</td><td style=\"text-align:left\">", f);
            lab_xml_escape(f, be->variants[k].about);
            fputs("</td></tr>\n", f);
        }
        fputs("</tbody>\n</table>\n", f);
    }

    fputs("<h2>What the algorithms do</h2>\n", f);
    int bad = 0;
    double h;
    char pwhy[LAB_WHY] = "";
    fputs("<div class=\"fig\">\n", f);
    bad |= figure(f, "tally explain sum,min,max --n 32: one tree computes all three; every level drawn.",
                  lab_svg_tree(f, 7, 32, 0, &h, pwhy), pwhy);
    fputs("<div class=\"fig\">\n", f);
    bad |= figure(f, "tally explain sum,min,max --n 65536: large levels summarised as bars, the top six levels in full.",
                  lab_svg_tree(f, 7, 65536, 0, &h, pwhy), pwhy);
    fputs("<div class=\"fig\">\n", f);
    bad |= figure(f, "tally explain two-pass --n 1048576: per-workgroup partials of a two-pass reduction.",
                  lab_svg_two_pass(f, UINT64_C(1) << 20, &h, pwhy), pwhy);
    fputs("<div class=\"fig\">\n", f);
    bad |= figure(f, "tally explain scan --n 32: running totals over their inputs, with Hillis-Steele's steps.",
                  lab_svg_scan(f, 32, &h, pwhy), pwhy);
    fputs("<div class=\"fig\">\n", f);
    bad |= figure(f, "tally explain warp --n 64: a block's sum by warp shuffles, as GPU kernels (and seed 004's subgroup variant) finish it.",
                  lab_svg_warp(f, 64, &h, pwhy), pwhy);
    fputs("<h2>Accuracy</h2>\n<div class=\"fig\">\n", f);
    bad |= figure(f, "tally explain accuracy: seed 001's 4,194,304 prices summed five ways.",
                  lab_svg_accuracy(f, NULL, UINT64_C(4194304), "prices (seed 001)", &h, pwhy), pwhy);
    fputs("</body>\n</html>\n", f);
    if (lab_commit(f, tmp, path, !bad)) {
        snprintf(why, LAB_WHY, bad ? "a picture failed: %s" : "write error", pwhy);
        return -1;
    }
    return 0;
}
