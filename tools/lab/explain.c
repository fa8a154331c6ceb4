/* `tally explain`: pictures of what the algorithms do (seeds 000, 001, 003), as SVG.
 * The same panels go into the HTML page of `tally bench --html`. */
#include "lab.h"
#include "lab_internal.h"
#include "tally.h"
#ifdef TALLY_LAB_IO
#include "tally_io.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W LAB_SVG_WIDTH
#define PX 170.0          /* left edge of the drawing area; labels sit left of it */
#define PW 810.0          /* width of the drawing area */
#define FULL_MAX 64       /* levels with at most this many nodes are drawn with their values */
#define COLUMNS 405       /* bars across the drawing area when a level is summarised */
#define FONT "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\""
#define MONO "font-family=\"ui-monospace, 'DejaVu Sans Mono', Menlo, monospace\""

static const char *BG = "#f7f4ee", *MIN_C = "#2e8f4d", *MAX_C = "#cf4f35",
                  *BLUE = "#1f66b5", *ORANGE = "#d9901f", *GREY = "#8a94a3";

static void svg_open(FILE *f, double h)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
               "viewBox=\"0 0 %d %.0f\" %s font-size=\"12\">\n", W, h, W, h, FONT);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"%s\"/>\n", W, h, BG);
}

static void text(FILE *f, double x, double y, const char *attrs, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" %s>", x, y, attrs ? attrs : "");
    lab_xml_escape(f, s);
    fputs("</text>\n", f);
}

/* 1234567.891 -> "1,234,567.89" with `decimals` digits after the point. */
static const char *fmt_num(double v, int decimals, char *buf, size_t size)
{
    if (isnan(v)) { snprintf(buf, size, "NaN"); return buf; }
    if (isinf(v)) { snprintf(buf, size, v > 0 ? "inf" : "-inf"); return buf; }
    char raw[64];
    snprintf(raw, sizeof raw, "%.*f", decimals, fabs(v));
    char *dot = strchr(raw, '.');
    size_t ilen = dot ? (size_t)(dot - raw) : strlen(raw);
    size_t o = 0;
    if (v < 0 && o + 1 < size) buf[o++] = '-';
    for (size_t i = 0; i < ilen && o + 2 < size; ++i) {
        if (i > 0 && (ilen - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = raw[i];
    }
    for (const char *p = dot; p && *p && o + 1 < size; ++p) buf[o++] = *p;
    buf[o] = '\0';
    return buf;
}

/* A colour between a and b (0xRRGGBB), t in [0, 1]. */
static const char *mix(unsigned a, unsigned b, double t, char *buf)
{
    int r = (int)(((a >> 16) & 255) * (1 - t) + ((b >> 16) & 255) * t + 0.5);
    int g = (int)(((a >> 8) & 255) * (1 - t) + ((b >> 8) & 255) * t + 0.5);
    int bl = (int)((a & 255) * (1 - t) + (b & 255) * t + 0.5);
    snprintf(buf, 8, "#%02x%02x%02x", r, g, bl);
    return buf;
}

/* A row of boxes with values in them: horizontal text when it fits, else vertical. */
typedef struct box_row {
    int count;
    double w;            /* box width */
    double h;            /* row height */
    int vertical;
} box_row;

static box_row layout_row(int count, int max_chars)
{
    box_row r;
    r.count = count;
    r.w = PW / count;
    double need = max_chars * 6.4 + 6;
    r.vertical = need > r.w - 2;
    r.h = r.vertical ? need + 4 : 22;
    if (r.h < 22) r.h = 22;
    return r;
}

static void draw_box(FILE *f, const box_row *r, int i, double y, const char *fill,
                     const char *second_fill, const char *ink, const char *label)
{
    double x = PX + i * r->w;
    double bw = r->w > 3 ? r->w - 1.5 : r->w;
    if (second_fill) {
        fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>", x, y, bw / 2, r->h, fill);
        fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>\n", x + bw / 2, y, bw / 2, r->h, second_fill);
    } else {
        fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" rx=\"2\" fill=\"%s\"/>\n", x, y, bw, r->h, fill);
    }
    if (!label) return;
    double cx = x + bw / 2, cy = y + r->h / 2;
    if (r->vertical)
        fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" transform=\"rotate(-90 %.2f %.1f)\" text-anchor=\"middle\" "
                   "dominant-baseline=\"central\" font-size=\"%.1f\" fill=\"%s\" %s>",
                cx, cy, cx, cy, r->w < 14 ? 9.5 : 10.5, ink, MONO);
    else
        fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" dominant-baseline=\"central\" "
                   "font-size=\"10.5\" fill=\"%s\" %s>", cx, cy, ink, MONO);
    lab_xml_escape(f, label);
    fputs("</text>\n", f);
}

/* ---- the reduction tree (seed 000) ------------------------------------------------------------ */
typedef struct tree_level { uint64_t m; double *sum, *min, *max; } tree_level;

static void fmt_node(double v, int is_float, char *buf, size_t size)
{
    if (is_float) snprintf(buf, size, "%.2f", v);
    else snprintf(buf, size, "%.0f", v);
}

int lab_svg_tree(FILE *f, unsigned ops, uint64_t n, int is_float, double *height, char *why)
{
    if (n == 0) { snprintf(why, LAB_WHY, "a tree needs at least one element"); return -1; }
    if (n > (UINT64_C(1) << 24)) { snprintf(why, LAB_WHY, "n is at most 2^24 for a tree picture"); return -1; }
    if (!(ops & 7)) ops = LAB_TREE_SUM;
    int L = 0;
    while ((UINT64_C(1) << L) < n) ++L;   /* levels 0..L; the last has one node */
    tree_level *lv = calloc((size_t)L + 1, sizeof *lv);
    double *store = malloc(sizeof(double) * 3 * (2 * n + (uint64_t)L + 2));
    if (!lv || !store) { free(lv); free(store); snprintf(why, LAB_WHY, "out of memory"); return -1; }
    double *p = store;
    uint64_t m = n;
    for (int k = 0; k <= L; ++k) {
        lv[k].m = m;
        lv[k].sum = p; lv[k].min = p + m; lv[k].max = p + 2 * m;
        p += 3 * m;
        m = (m + 1) / 2;
    }
    uint64_t imin = 0, imax = 0;
    for (uint64_t i = 0; i < n; ++i) {
        uint32_t c = lab_hashed_cents(i);
        double v = is_float ? (double)(float)(c / 100.0) : (double)c;
        lv[0].sum[i] = lv[0].min[i] = lv[0].max[i] = v;
        if (v < lv[0].min[imin]) imin = i;
        if (v > lv[0].max[imax]) imax = i;
    }
    /* Seed 000's tree: with m nodes, node l (l < m') takes node l + m' too, m' = ceil(m / 2). */
    for (int k = 1; k <= L; ++k) {
        uint64_t mm = lv[k].m, pm = lv[k - 1].m;
        for (uint64_t l = 0; l < mm; ++l) {
            double s = lv[k - 1].sum[l], lo = lv[k - 1].min[l], hi = lv[k - 1].max[l];
            if (l + mm < pm) {
                s += lv[k - 1].sum[l + mm];
                if (lv[k - 1].min[l + mm] < lo) lo = lv[k - 1].min[l + mm];
                if (lv[k - 1].max[l + mm] > hi) hi = lv[k - 1].max[l + mm];
            }
            lv[k].sum[l] = s; lv[k].min[l] = lo; lv[k].max[l] = hi;
        }
    }
    /* The node holding the minimum (maximum) at level k: its index modulo the level's size. */
    uint64_t *pmin = calloc((size_t)L + 1, sizeof *pmin), *pmax = calloc((size_t)L + 1, sizeof *pmax);
    if (!pmin || !pmax) { free(pmin); free(pmax); free(lv); free(store); snprintf(why, LAB_WHY, "out of memory"); return -1; }
    pmin[0] = imin; pmax[0] = imax;
    for (int k = 1; k <= L; ++k) { pmin[k] = pmin[k - 1] % lv[k].m; pmax[k] = pmax[k - 1] % lv[k].m; }
    int show_path_min = (ops & LAB_TREE_MIN) != 0, show_path_max = (ops & LAB_TREE_MAX) != 0;
    /* Which value the nodes print: the sum if asked, else min and/or max ("lo-hi" for both). */
    int show = (ops & LAB_TREE_SUM) ? 0 : (ops & LAB_TREE_MIN) ? ((ops & LAB_TREE_MAX) ? 3 : 1) : 2;
#define NODE(k, i) (show == 0 ? lv[k].sum[i] : show == 2 ? lv[k].max[i] : lv[k].min[i])
#define LABEL(k, i, buf)                                                                        \
    do {                                                                                        \
        if (show == 3) {                                                                        \
            char lo_[32], hi_[32];                                                              \
            fmt_node(lv[k].min[i], is_float, lo_, sizeof lo_);                                  \
            fmt_node(lv[k].max[i], is_float, hi_, sizeof hi_);                                  \
            if (strcmp(lo_, hi_) == 0) snprintf(buf, sizeof buf, "%s", lo_);                    \
            else snprintf(buf, sizeof buf, "%s-%s", lo_, hi_);                                  \
        } else {                                                                                \
            fmt_node(NODE(k, i), is_float, buf, sizeof buf);                                    \
        }                                                                                       \
    } while (0)

    /* Layout. */
    double *row_y = malloc(sizeof(double) * ((size_t)L + 1));
    box_row *rows = malloc(sizeof(box_row) * ((size_t)L + 1));
    if (!row_y || !rows) { free(row_y); free(rows); free(pmin); free(pmax); free(lv); free(store); snprintf(why, LAB_WHY, "out of memory"); return -1; }
    double y = 74;
    for (int k = 0; k <= L; ++k) {
        if (lv[k].m <= FULL_MAX) {
            int chars = 1;
            char b[64];
            for (uint64_t i = 0; i < lv[k].m; ++i) {
                LABEL(k, i, b);
                if ((int)strlen(b) > chars) chars = (int)strlen(b);
            }
            rows[k] = layout_row((int)lv[k].m, chars);
        } else {
            rows[k].count = (int)(lv[k].m < COLUMNS ? lv[k].m : COLUMNS);
            rows[k].w = PW / rows[k].count;
            rows[k].h = 18;
            rows[k].vertical = 0;
        }
        row_y[k] = y;
        int links = k < L && lv[k].m <= FULL_MAX;
        y += rows[k].h + (links ? 28 : 6);
    }
    double h = y + 70;
    svg_open(f, h);

    char t1[256], a[64], b[64], c[64];
    const char *names[3] = { "sum", "min", "max" };
    char opsname[32] = "";
    for (int k = 0; k < 3; ++k)
        if (ops & (1u << k)) { if (opsname[0]) strcat(opsname, ", "); strcat(opsname, names[k]); }
    snprintf(t1, sizeof t1, "Reduction tree: %s of %s hashed prices%s (seed 000), every level",
             opsname, lab_commas(n, a, sizeof a), is_float ? " in dollars" : " in cents");
    text(f, 14, 24, "font-size=\"15\" font-weight=\"bold\" fill=\"#222\"", t1);
    snprintf(t1, sizeof t1, "%d step%s: node l combines node l + stride, the stride halves (%s, %s, ..., 1); "
             "levels over %d nodes: bars of run means, zoomed", L, L == 1 ? "" : "s",
             lab_commas(lv[L > 0 ? 1 : 0].m, a, sizeof a), L > 1 ? lab_commas(lv[2].m, b, sizeof b) : "1", FULL_MAX);
    text(f, 14, 44, "fill=\"#555\"", t1);

    char col[8];
    for (int k = 0; k <= L; ++k) {
        snprintf(t1, sizeof t1, "level %d", k);
        text(f, 14, row_y[k] + rows[k].h / 2 + 4, "font-weight=\"bold\" fill=\"#333\"", t1);
        snprintf(t1, sizeof t1, "%s node%s", lab_commas(lv[k].m, a, sizeof a), lv[k].m == 1 ? "" : "s");
        text(f, 70, row_y[k] + rows[k].h / 2 + 4, "fill=\"#666\"", t1);
        double t = L ? (double)k / L : 1.0;
        mix(0xc9d5e4, 0x2f6fb5, t, col);
        const char *ink = t > 0.45 ? "#fff" : "#1b2a3a";
        if (lv[k].m <= FULL_MAX) {
            if (k < L) { /* links to the parents, drawn first so the boxes sit on top */
                const box_row *r = &rows[k], *q = &rows[k + 1];
                for (uint64_t i = 0; i < lv[k].m; ++i) {
                    uint64_t parent = i % lv[k + 1].m;
                    int on_min = show_path_min && i == pmin[k], on_max = show_path_max && i == pmax[k];
                    const char *stroke = on_min ? MIN_C : on_max ? MAX_C : "#b4bcc8";
                    fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"/>\n",
                            PX + (i + 0.5) * r->w, row_y[k] + r->h, PX + (parent + 0.5) * q->w, row_y[k + 1],
                            stroke, (on_min || on_max) ? "2" : "1");
                }
            }
            for (uint64_t i = 0; i < lv[k].m; ++i) {
                int is_min = (k == 0 || show_path_min) && i == pmin[k];
                int is_max = (k == 0 || show_path_max) && i == pmax[k];
                const char *fill = col, *fill2 = NULL, *tink = ink;
                if (is_min && is_max) { fill = MIN_C; fill2 = MAX_C; tink = "#fff"; }
                else if (is_min) { fill = MIN_C; tink = "#fff"; }
                else if (is_max) { fill = MAX_C; tink = "#fff"; }
                LABEL(k, i, b);
                draw_box(f, &rows[k], (int)i, row_y[k], fill, fill2, tink, b);
            }
        } else {
            /* Summarised: each bar is the mean of a run of nodes, scaled to the level's largest. */
            int C = rows[k].count;
            double *mean = malloc(sizeof(double) * (size_t)C);
            if (!mean) continue;
            double top = 0, bottom = INFINITY;
            for (int cidx = 0; cidx < C; ++cidx) {
                uint64_t b0 = lv[k].m * (uint64_t)cidx / (uint64_t)C, b1 = lv[k].m * (uint64_t)(cidx + 1) / (uint64_t)C;
                double s = 0;
                for (uint64_t i = b0; i < b1; ++i) s += NODE(k, i);
                mean[cidx] = s / (double)(b1 - b0);
                if (mean[cidx] > top) top = mean[cidx];
                if (mean[cidx] < bottom) bottom = mean[cidx];
            }
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ebe6dc\"/>\n", PX, row_y[k], PW, rows[k].h);
            int cmin = (int)(pmin[k] * (uint64_t)C / lv[k].m), cmax = (int)(pmax[k] * (uint64_t)C / lv[k].m);
            /* Zoomed so the spread shows: the lowest bar keeps a third of the height. */
            double base = bottom - 0.5 * (top - bottom);
            if (base < 0 || top <= bottom) base = 0;
            for (int cidx = 0; cidx < C; ++cidx) {
                double bh = top > base ? rows[k].h * (mean[cidx] - base) / (top - base) : rows[k].h;
                const char *fill = col;
                if ((k == 0 || show_path_min) && cidx == cmin) fill = MIN_C;
                else if ((k == 0 || show_path_max) && cidx == cmax) fill = MAX_C;
                fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
                        PX + cidx * rows[k].w, row_y[k] + rows[k].h - bh, rows[k].w > 2 ? rows[k].w - 0.4 : rows[k].w, bh, fill);
            }
            free(mean);
        }
    }

    /* The answer and the legend. */
    double yy = h - 44;
    double decimals = is_float ? 2 : 0;
    snprintf(t1, sizeof t1, "sum = %s", fmt_num(lv[L].sum[0], (int)decimals, a, sizeof a));
    text(f, 14, yy, "font-weight=\"bold\" fill=\"#1f4f8a\"", t1);
    snprintf(t1, sizeof t1, "min = %s (element %s)", fmt_num(lv[L].min[0], (int)decimals, a, sizeof a), lab_commas(imin, b, sizeof b));
    text(f, 230, yy, "font-weight=\"bold\" fill=\"#2e8f4d\"", t1);
    snprintf(t1, sizeof t1, "max = %s (element %s)", fmt_num(lv[L].max[0], (int)decimals, a, sizeof a), lab_commas(imax, c, sizeof c));
    text(f, 500, yy, "font-weight=\"bold\" fill=\"#cf4f35\"", t1);
    snprintf(t1, sizeof t1, "green: the minimum%s; red: the maximum%s. %s",
             show_path_min ? " and the nodes it travels through" : "",
             show_path_max ? " and its path" : "",
             show == 3 ? "Nodes show min-max of the elements below them." :
             show == 0 ? "One tree carries all three at once; integer cents keep the sum exact." :
             "Nodes show the running extreme of the elements below them.");
    text(f, 14, yy + 22, "fill=\"#555\"", t1);
    fputs("</svg>\n", f);
#undef NODE
#undef LABEL
    free(row_y); free(rows); free(pmin); free(pmax); free(lv); free(store);
    *height = h;
    return 0;
}

/* ---- the two-pass reduction (seed 001) -------------------------------------------------------- */
/* f32 tree over a[0..256) exactly as a workgroup of 256 does it (stride 128 .. 1). */
static float tree256(float *a)
{
    for (int s = 128; s > 0; s >>= 1)
        for (int l = 0; l < s; ++l) a[l] += a[l + s];
    return a[0];
}

int lab_svg_two_pass(FILE *f, uint64_t n, double *height, char *why)
{
    const int G = 256, WG = 256;
    int substituted = 0;
    if (n < (uint64_t)G * WG) { n = UINT64_C(1) << 20; substituted = 1; }
    if (n > (UINT64_C(1) << 28)) { snprintf(why, LAB_WHY, "n is at most 2^28 for the two-pass picture"); return -1; }
    float *x = malloc(sizeof(float) * n);
    if (!x) { snprintf(why, LAB_WHY, "out of memory"); return -1; }
    lab_fill(x, n, LAB_DATA_PRICES, 1);
    float partial[256], sums[256];
    uint64_t stride = (uint64_t)G * WG;
    for (int w = 0; w < G; ++w) {
        for (int l = 0; l < WG; ++l) {
            float s = 0.0f;  /* grid-stride loop of invocation g = w * 256 + l */
            for (uint64_t i = (uint64_t)w * WG + l; i < n; i += stride) s += x[i];
            sums[l] = s;
        }
        partial[w] = tree256(sums);
    }
    for (int l = 0; l < WG; ++l) sums[l] = partial[l];
    float total = tree256(sums);
    lab_exact acc;
    lab_exact_init(&acc);
    float naive = 0.0f;
    for (uint64_t i = 0; i < n; ++i) { lab_exact_add(&acc, x[i]); naive += x[i]; }
    double exact = lab_exact_round(&acc);
    free(x);

    double lo = INFINITY, hi = -INFINITY, mean = 0;
    for (int w = 0; w < G; ++w) { if (partial[w] < lo) lo = partial[w]; if (partial[w] > hi) hi = partial[w]; mean += partial[w]; }
    mean /= G;
    double span = hi - lo > 0 ? hi - lo : 1;
    double base = lo - 0.25 * span, ceil_v = hi + 0.05 * span;
    double h = 420, by = 80, bh = 190;
    svg_open(f, h);
    char t1[256], a[64], b[64];
    snprintf(t1, sizeof t1, "Two-pass reduction of %s prices: pass 1 writes one partial per workgroup (%d bars)%s",
             lab_commas(n, a, sizeof a), G, substituted ? " (n raised to 2^20)" : "");
    text(f, 14, 24, "font-size=\"15\" font-weight=\"bold\" fill=\"#222\"", t1);
    snprintf(t1, sizeof t1, "%d workgroups x %d invocations; each invocation sums a grid-stride slice "
             "(i += %s) in a register, the workgroup's tree makes one partial (seed 001)", G, WG,
             lab_commas(stride, a, sizeof a));
    text(f, 14, 44, "fill=\"#555\"", t1);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ebe6dc\"/>\n", PX, by, PW, bh);
    for (int w = 0; w < G; ++w) {
        double v = (partial[w] - base) / (ceil_v - base);
        double hh = v * bh;
        fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
                PX + w * PW / G, by + bh - hh, PW / G - 0.6, hh, BLUE);
    }
    double my = by + bh - (mean - base) / (ceil_v - base) * bh;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-dasharray=\"5 4\"/>\n", PX, my, PX + PW, my);
    snprintf(t1, sizeof t1, "mean %s", fmt_num(mean, 0, a, sizeof a));
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"92\" height=\"16\" fill=\"#f7f4ee\" opacity=\"0.85\"/>\n", PX + PW - 96, my - 19);
    text(f, PX + PW - 4, my - 7, "text-anchor=\"end\" font-size=\"11\" fill=\"#333\"", t1);
    text(f, PX - 6, by + 10, "text-anchor=\"end\" font-size=\"11\" fill=\"#777\"", fmt_num(ceil_v, 0, a, sizeof a));
    text(f, PX - 6, by + bh, "text-anchor=\"end\" font-size=\"11\" fill=\"#777\"", fmt_num(base, 0, a, sizeof a));
    text(f, 14, by + bh / 2 - 20, "font-weight=\"bold\" fill=\"#333\"", "pass 1");
    text(f, 14, by + bh / 2 - 4, "fill=\"#666\"", "256 partials");
    text(f, 14, by + bh / 2 + 12, "fill=\"#666\"", "(axis zoomed)");
    text(f, PX, by + bh + 16, "font-size=\"11\" fill=\"#777\"", "workgroup 0");
    text(f, PX + PW, by + bh + 16, "text-anchor=\"end\" font-size=\"11\" fill=\"#777\"", "workgroup 255");
    double ty = by + bh + 42;
    text(f, 14, ty, "font-weight=\"bold\" fill=\"#333\"", "pass 2");
    snprintf(t1, sizeof t1, "the same shader over the 256 partials with one workgroup: total %s",
             fmt_num(total, 0, a, sizeof a));
    text(f, PX, ty, "fill=\"#333\"", t1);
    struct { const char *name; double v; const char *color; } lines[3] = {
        { "exact", exact, "#222" },
        { "two-pass tree in f32", total, "#1e6b3a" },
        { "naive float32 running total", naive, "#8a2b2b" },
    };
    for (int k = 0; k < 3; ++k) {
        char attrs[160];
        snprintf(attrs, sizeof attrs, "fill=\"%s\"", lines[k].color);
        text(f, PX, ty + 28 + 18 * k, attrs, lines[k].name);
        snprintf(attrs, sizeof attrs, MONO " text-anchor=\"end\" fill=\"%s\"", lines[k].color);
        text(f, PX + 330, ty + 28 + 18 * k, attrs, fmt_num(lines[k].v, 2, a, sizeof a));
        if (k) {
            snprintf(t1, sizeof t1, "error %s%s", lines[k].v > exact ? "+" : "", fmt_num(lines[k].v - exact, 2, b, sizeof b));
            snprintf(attrs, sizeof attrs, MONO " fill=\"%s\"", lines[k].color);
            text(f, PX + 350, ty + 28 + 18 * k, attrs, t1);
        }
    }
    text(f, 14, ty + 90, "font-size=\"11.5\" fill=\"#555\"",
         "The tree adds numbers of similar size; the running total loses low bits once it grows large.");
    fputs("</svg>\n", f);
    *height = h;
    return 0;
}

/* ---- the warp reduction (seed 004's subgroup picture) ------------------------------------------ */
int lab_svg_warp(FILE *f, uint64_t n, double *height, char *why)
{
    const int WARP = 32;
    if (n == 0 || n > 1024) { snprintf(why, LAB_WHY, "the warp picture takes 1 to 1024 elements (one block)"); return -1; }
    int warps = (int)((n + WARP - 1) / WARP);
    int lanes = warps * WARP;   /* a whole number of warps; lanes past n hold 0 */
    uint64_t v[1024], start[1024];
    for (int l = 0; l < lanes; ++l) v[l] = start[l] = (uint64_t)l < n ? lab_hashed_cents((uint64_t)l) : 0;
    /* Rows: the inputs, then lane l += lane l + d (within its warp) for d = 16, 8, 4, 2, 1. */
    uint64_t rows[6][1024];
    memcpy(rows[0], v, sizeof(uint64_t) * (size_t)lanes);
    for (int s = 0, d = WARP / 2; d >= 1; d /= 2, ++s) {
        uint64_t next[1024];
        for (int l = 0; l < lanes; ++l) {
            int lane = l % WARP;
            next[l] = lane + d < WARP ? v[l] + v[l + d] : v[l]; /* shfl_down: past the warp, unchanged */
        }
        memcpy(v, next, sizeof(uint64_t) * (size_t)lanes);
        memcpy(rows[s + 1], v, sizeof(uint64_t) * (size_t)lanes);
    }
    uint64_t warp_sum[32], total = 0;
    for (int w = 0; w < warps; ++w) { warp_sum[w] = v[w * WARP]; total += warp_sum[w]; }
    char b[64];
    snprintf(b, sizeof b, "%llu", (unsigned long long)total);
    box_row r = layout_row(lanes, (int)strlen(b));
    int summarise = lanes > 128;       /* beyond 4 warps the lanes are drawn as bars only */
    if (summarise) { r.h = 16; r.vertical = 0; }
    box_row wr = layout_row(warps < 8 ? 8 : warps, (int)strlen(b));
    double y0 = 70, gap = 8;
    double h = y0 + 6 * (r.h + gap) + 16 + wr.h + 24 + 26 + 60;
    svg_open(f, h);
    char t1[256], a[64];
    snprintf(t1, sizeof t1, "Warp reduction of %s hashed prices: %d warp%s of 32 lanes, then one warp over the warp sums",
             lab_commas(n, a, sizeof a), warps, warps == 1 ? "" : "s");
    text(f, 14, 24, "font-size=\"15\" font-weight=\"bold\" fill=\"#222\"", t1);
    text(f, 14, 44, "fill=\"#555\"", "v += __shfl_down_sync(mask, v, d) for d = 16, 8, 4, 2, 1: no shared memory and no barrier; "
         "lane 0 ends with the warp's sum (seed 004's subgroupAdd)");
    char col[8];
    for (int s = 0; s < 6; ++s) {
        double y = y0 + s * (r.h + gap);
        if (s == 0) text(f, 14, y + r.h / 2 + 4, "font-weight=\"bold\" fill=\"#333\"", "lanes");
        else {
            snprintf(t1, sizeof t1, "d = %d", (WARP / 2) >> (s - 1));
            text(f, 14, y + r.h / 2 + 4, "font-weight=\"bold\" fill=\"#333\"", t1);
        }
        int d = s ? (WARP / 2) >> (s - 1) : WARP;
        for (int l = 0; l < lanes; ++l) {
            int lane = l % WARP;
            int useful = s == 0 || lane < d;   /* lanes at or past d carry nothing needed later */
            const char *fill = s == 0 ? ((uint64_t)l < n ? "#f2d3a2" : "#eeeae2")
                             : useful ? mix(0xc9d5e4, 0x2f6fb5, s / 5.0, col) : "#e4e0d8";
            if (s == 5 && lane == 0) fill = MIN_C;
            const char *ink = (useful && s >= 3) || (s == 5 && lane == 0) ? "#fff" : "#1b2a3a";
            if (summarise) {
                double bh = r.h * (useful ? 1.0 : 0.35);
                fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>\n",
                        PX + l * r.w, y + r.h - bh, r.w > 2 ? r.w - 0.4 : r.w, bh, fill);
            } else {
                snprintf(b, sizeof b, "%llu", (unsigned long long)rows[s][l]);
                draw_box(f, &r, l, y, fill, NULL, ink, b);
            }
        }
        if (warps > 1 && !summarise)
            for (int w = 1; w < warps; ++w)
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-width=\"1.5\"/>\n",
                        PX + w * WARP * r.w - 0.8, y - 3, PX + w * WARP * r.w - 0.8, y + r.h + 3);
    }
    double wy = y0 + 6 * (r.h + gap) + 16;
    text(f, 14, wy + wr.h / 2 + 4, "font-weight=\"bold\" fill=\"#333\"", "warp sums");
    for (int w = 0; w < warps; ++w) {
        snprintf(b, sizeof b, "%llu", (unsigned long long)warp_sum[w]);
        draw_box(f, &wr, w, wy, MIN_C, NULL, "#fff", b);
    }
    snprintf(t1, sizeof t1, "lane 0 of each warp writes its sum to shared memory; one barrier; warp 0 reduces the %d sum%s "
             "the same way: total %s", warps, warps == 1 ? "" : "s", lab_commas(total, a, sizeof a));
    text(f, 14, wy + wr.h + 24, "fill=\"#333\"", t1);
    text(f, 14, wy + wr.h + 46, "fill=\"#555\"", "Grey lanes still add (every lane runs the same instruction) but nothing uses their values. "
         "The 16-byte-load variant first sums four elements per lane.");
    fputs("</svg>\n", f);
    *height = h;
    return 0;
}

/* ---- the scan (seed 003) ------------------------------------------------------------------------ */
int lab_svg_scan(FILE *f, uint64_t n, double *height, char *why)
{
    if (n == 0) { snprintf(why, LAB_WHY, "a scan picture needs at least one element"); return -1; }
    if (n > (UINT64_C(1) << 30)) { snprintf(why, LAB_WHY, "n is at most 2^30 for the scan picture"); return -1; }
    int steps = 0;
    while ((UINT64_C(1) << steps) < n) ++steps;
    int small = n <= FULL_MAX;
    uint64_t cur[FULL_MAX];
    uint64_t hist[8][FULL_MAX]; /* Hillis-Steele after each step, for small n */
    if (small) {
        for (uint64_t i = 0; i < n; ++i) cur[i] = lab_copies_sold(i);
        for (int s = 0; s < steps; ++s) {
            uint64_t d = UINT64_C(1) << s, next[FULL_MAX];
            for (uint64_t i = 0; i < n; ++i) next[i] = cur[i] + (i >= d ? cur[i - d] : 0);
            memcpy(cur, next, sizeof(uint64_t) * n);
            memcpy(hist[s], cur, sizeof(uint64_t) * n);
        }
        for (uint64_t i = 0; i < n; ++i) cur[i] = lab_copies_sold(i);
    }
    box_row r = layout_row((int)(small ? n : 1), 1);
    if (small) {
        char b[32];
        uint64_t total = 0;
        for (uint64_t i = 0; i < n; ++i) total += lab_copies_sold(i);
        snprintf(b, sizeof b, "%llu", (unsigned long long)total);
        r = layout_row((int)n, (int)strlen(b));
    }
    double y = 66;
    double rows_h = small ? (steps + 1) * (r.h + 8) + 10 : 0;
    double chart_y = y + rows_h, chart_h = 170;
    double h = chart_y + chart_h + 86;
    svg_open(f, h);
    char t1[256], a[64], b[64];
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; ++i) total += lab_copies_sold(i);
    snprintf(t1, sizeof t1, "Inclusive scan of %s values (copies sold per day, seed 003): total %s",
             lab_commas(n, a, sizeof a), lab_commas(total, b, sizeof b));
    text(f, 14, 24, "font-size=\"15\" font-weight=\"bold\" fill=\"#222\"", t1);
    snprintf(t1, sizeof t1, "Hillis-Steele: %d step%s; at step d every element adds the value d places to its left "
             "(~n log2 n adds; a loop does n - 1, Blelloch ~2n)", steps, steps == 1 ? "" : "s");
    text(f, 14, 44, "fill=\"#555\"", t1);
    if (small) {
        char col[8];
        for (int s = -1; s < steps; ++s) {
            double ry = y + (s + 1) * (r.h + 8);
            if (s < 0) {
                text(f, 14, ry + r.h / 2 + 4, "font-weight=\"bold\" fill=\"#333\"", "input");
            } else {
                snprintf(t1, sizeof t1, "d = %llu", (unsigned long long)(UINT64_C(1) << s));
                text(f, 14, ry + r.h / 2 + 4, "font-weight=\"bold\" fill=\"#333\"", t1);
                if (s == steps - 1) text(f, 70, ry + r.h / 2 + 4, "fill=\"#1f4f8a\"", "= scan");
            }
            for (uint64_t i = 0; i < n; ++i) {
                uint64_t v = s < 0 ? cur[i] : hist[s][i];
                int changed = s >= 0 && i >= (UINT64_C(1) << s);
                const char *fill = s < 0 ? "#f2d3a2" : changed ? mix(0xc9d5e4, 0x2f6fb5, (double)(s + 1) / steps, col) : "#e4e0d8";
                const char *ink = (s >= 0 && changed && (double)(s + 1) / steps > 0.45) ? "#fff" : "#1b2a3a";
                snprintf(b, sizeof b, "%llu", (unsigned long long)v);
                draw_box(f, &r, (int)i, ry, fill, NULL, ink, b);
            }
        }
    }
    /* Bars: inputs (orange, bottom band) and running totals (blue), like seed 003. */
    int C = (int)(n < COLUMNS ? n : COLUMNS);
    double cw = PW / C;
    double band = 34, tot_h = chart_h - band - 12;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ebe6dc\"/>\n", PX, chart_y, PW, chart_h);
    uint64_t run = 0, i = 0;
    for (int cidx = 0; cidx < C; ++cidx) {
        uint64_t b1 = n * (uint64_t)(cidx + 1) / (uint64_t)C, cnt = 0, s = 0;
        for (; i < b1; ++i) { s += lab_copies_sold(i); ++cnt; }
        run += s;
        double in_mean = cnt ? (double)s / (double)cnt : 0;
        double ih = band * in_mean / 4.0, th = total ? tot_h * (double)run / (double)total : 0;
        fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>",
                PX + cidx * cw, chart_y + chart_h - ih, cw > 2 ? cw - 0.5 : cw, ih, ORANGE);
        fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
                PX + cidx * cw, chart_y + chart_h - band - 6 - th, cw > 2 ? cw - 0.5 : cw, th, BLUE);
    }
    text(f, 14, chart_y + 20, "font-weight=\"bold\" fill=\"#1f4f8a\"", "running total");
    text(f, 14, chart_y + 36, "fill=\"#666\"", n > COLUMNS ? "(one bar per run of days)" : "");
    text(f, 14, chart_y + chart_h - 10, "font-weight=\"bold\" fill=\"#b07a10\"", "copies sold");
    snprintf(t1, sizeof t1, "%s", lab_commas(total, a, sizeof a));
    text(f, PX + PW - 4, chart_y + 16, "text-anchor=\"end\" font-size=\"11\" fill=\"#1f4f8a\"", t1);
    double ty = chart_y + chart_h + 24;
    snprintf(t1, sizeof t1, "out[i] = in[0] + ... + in[i]; the last total is the sum (%s). "
             "An exclusive scan shifts it right by one and starts at 0.", lab_commas(total, a, sizeof a));
    text(f, 14, ty, "fill=\"#333\"", t1);
    text(f, 14, ty + 20, "fill=\"#555\"", small
         ? "Grey boxes are unchanged in that step (nothing d places to their left); every step needs all reads done before any write."
         : "Blelloch's work-efficient scan: an up-sweep of partial sums, then a down-sweep; tally uses one pass with decoupled look-back on GPUs.");
    fputs("</svg>\n", f);
    *height = h;
    return 0;
}

/* ---- accuracy (seed 001) ------------------------------------------------------------------------ */
int lab_svg_accuracy(FILE *f, const float *x, uint64_t n, const char *label, double *height, char *why)
{
    float *own = NULL;
    if (!x) {
        own = malloc(sizeof(float) * (n ? n : 1));
        if (!own) { snprintf(why, LAB_WHY, "out of memory"); return -1; }
        lab_fill(own, n, LAB_DATA_PRICES, 1);
        x = own;
    }
    lab_exact acc;
    lab_exact_init(&acc);
    float naive = 0.0f;
    double run64 = 0.0;
    for (uint64_t i = 0; i < n; ++i) { lab_exact_add(&acc, x[i]); naive += x[i]; run64 += x[i]; }
    double exact = lab_exact_round(&acc);
    double pairwise = lab_pairwise_f32(x, n);
    /* Seed 001's two-pass tree, in f32 (256 workgroups x 256, grid stride). */
    float sums[256], partial[256];
    for (int w = 0; w < 256; ++w) {
        for (int l = 0; l < 256; ++l) {
            float s = 0.0f;
            for (uint64_t i = (uint64_t)w * 256 + l; i < n; i += 65536) s += x[i];
            sums[l] = s;
        }
        partial[w] = tree256(sums);
    }
    memcpy(sums, partial, sizeof sums);
    double tree = tree256(sums);
    double tally_sum = NAN;
    char tally_note[160] = "";
    tally_context *ctx = NULL;
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    if (tally_create(&ctx, &o) == TALLY_OK) {
        tally_result r;
        tally_status st = tally_reduce(ctx, TALLY_SUM, TALLY_F32, x, n, NULL, &r);
        if (st == TALLY_OK) tally_sum = r.value.f64;
        else snprintf(tally_note, sizeof tally_note, "%s", tally_status_name(st));
        tally_destroy(ctx);
    } else {
        snprintf(tally_note, sizeof tally_note, "no CPU context");
    }
    free(own);

    struct { const char *name; double v; const char *color; } rows[] = {
        { "exact (superaccumulator)", exact, "#222" },
        { "tally_reduce (correctly rounded)", tally_sum, MIN_C },
        { "f64 running total", run64, GREY },
        { "pairwise f32 (NumPy)", pairwise, BLUE },
        { "two-pass tree f32 (seed 001)", tree, "#5a4fb5" },
        { "naive f32 running total", naive, MAX_C },
    };
    int R = (int)(sizeof rows / sizeof rows[0]);
    double y0 = 96, rh = 34, h = y0 + R * rh + 74;
    svg_open(f, h);
    char t1[256], a[64], b[64];
    snprintf(t1, sizeof t1, "Accuracy of a float32 sum: %s %s", lab_commas(n, a, sizeof a), label ? label : "values");
    text(f, 14, 24, "font-size=\"15\" font-weight=\"bold\" fill=\"#222\"", t1);
    text(f, 14, 44, "fill=\"#555\"", "Each bar is |computed - exact| / |exact| on a log scale (longer is worse); the exact sum is rounded once.");
    /* Axis: relative error 1e-17 .. 1e-2. */
    double ax0 = 470, ax1 = W - 30, lmin = -17, lmax = -2;
    for (int e = (int)lmin; e <= (int)lmax; e += 3) {
        double xx = ax0 + (e - lmin) / (lmax - lmin) * (ax1 - ax0);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d6d0c4\"/>\n", xx, y0 - 16, xx, y0 + R * rh - 8);
        snprintf(t1, sizeof t1, "1e%d", e);
        text(f, xx, y0 - 22, "text-anchor=\"middle\" font-size=\"10.5\" fill=\"#777\"", t1);
    }
    text(f, 14, y0 - 22, "font-size=\"11\" font-weight=\"bold\" fill=\"#555\"", "method");
    text(f, 250, y0 - 22, "font-size=\"11\" font-weight=\"bold\" fill=\"#555\"", "sum");
    for (int k = 0; k < R; ++k) {
        double yy = y0 + k * rh;
        text(f, 14, yy + 5, "fill=\"#222\"", rows[k].name);
        if (isnan(rows[k].v)) {
            snprintf(t1, sizeof t1, "unavailable %s", tally_note);
            text(f, 250, yy + 5, MONO " fill=\"#999\"", t1);
            continue;
        }
        text(f, 250, yy + 5, MONO " fill=\"#222\"", fmt_num(rows[k].v, 2, a, sizeof a));
        if (k == 0) continue;
        double err = rows[k].v - exact;
        double rel = exact != 0 ? fabs(err) / fabs(exact) : fabs(err);
        double len;
        if (rel == 0) {
            len = 3;
            snprintf(t1, sizeof t1, "0: exact");
        } else {
            double l10 = log10(rel);
            if (l10 < lmin) l10 = lmin;
            if (l10 > lmax) l10 = lmax;
            len = (l10 - lmin) / (lmax - lmin) * (ax1 - ax0);
            snprintf(t1, sizeof t1, "%s%s (%.1e)", err > 0 ? "+" : "", fmt_num(err, 4, b, sizeof b), rel);
        }
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" rx=\"2\" fill=\"%s\"/>\n", ax0, yy - 7, len < 3 ? 3 : len, rows[k].color);
        double tx = ax0 + len + 6;
        int inside = tx > ax1 - 150;
        text(f, inside ? ax0 + len - 6 : tx, yy + 4, inside ? "text-anchor=\"end\" font-size=\"11\" fill=\"#fff\"" : "font-size=\"11\" fill=\"#333\"", t1);
    }
    double ty = y0 + R * rh + 16;
    text(f, 14, ty, "fill=\"#444\"", "Small values added to a huge f32 total lose their low bits; the tree and pairwise sums add numbers of similar size.");
    text(f, 14, ty + 20, "fill=\"#444\"", "tally sums exactly and rounds once, so its answer does not depend on threads, SIMD width or backend.");
    fputs("</svg>\n", f);
    *height = h;
    return 0;
}

/* ---- tally explain ------------------------------------------------------------------------------- */
static const char explain_usage[] =
    "usage: tally explain OP [--n N] [--type T] [--input FILE] --svg FILE\n"
    "Draws what an algorithm does, as one SVG picture.\n"
    "  OP  sum, min, max or a list (sum,min,max): every level of a reduction tree, min and max\n"
    "      highlighted (seed 000), and for sums the two-pass partials (seed 001);\n"
    "      tree: the tree alone;  two-pass: the partials alone;\n"
    "      scan: a scan's running totals over its inputs, with Hillis-Steele's steps (seed 003);\n"
    "      warp: a block's sum by warp shuffles, then one warp over the warp sums (seed 004);\n"
    "      accuracy: exact sum, tally's, pairwise and a naive f32 running total, with errors;\n"
    "      all: every picture.\n"
    "  --n N        elements (default: 32 for trees and scans, 64 for warp (at most 1024),\n"
    "               1,048,576 for two-pass,\n"
    "               4,194,304 prices for accuracy); levels over 64 nodes are summarised\n"
    "  --type T     u32 (integer cents, default) or f32 (dollars) for the tree\n"
    "  --input FILE accuracy of the numbers in FILE instead (text, one or more a line, or .npy;\n"
    "               values are rounded to f32)\n"
    "  --svg FILE   where to write the picture (required)\n";

static int explain_bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "tally explain: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(tally explain --help lists the options)\n");
    return 2;
}

#ifdef TALLY_LAB_IO
/* A .npy array of any numeric type, each value rounded to f32 (the picture is about f32 sums). */
static float *read_npy(FILE *in, const char *path, uint64_t *n, char *why)
{
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : (1u << 20);
            uint8_t *g = realloc(buf, ncap);
            if (!g) { free(buf); snprintf(why, LAB_WHY, "out of memory reading %s", path); return NULL; }
            buf = g;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, in);
        len += got;
        if (got == 0) break;
    }
    tio_npy_info info;
    char err[200];
    if (tio_npy_parse(buf, len, &info, err, sizeof err) != TIO_NPY_OK) {
        snprintf(why, LAB_WHY, "%s: %s", path, err);
        free(buf);
        return NULL;
    }
    if (info.data_offset + info.count * info.elsize > len) {
        snprintf(why, LAB_WHY, "%s: the array is cut short", path);
        free(buf);
        return NULL;
    }
    float *x = malloc(sizeof(float) * (info.count ? info.count : 1));
    if (!x) { free(buf); snprintf(why, LAB_WHY, "out of memory reading %s", path); return NULL; }
    const uint8_t *p = buf + info.data_offset;
    for (uint64_t i = 0; i < info.count; ++i, p += info.elsize) {
        uint8_t b[8];
        for (size_t k = 0; k < info.elsize; ++k) b[k] = info.swap ? p[info.elsize - 1 - k] : p[k];
        double v = 0;
        switch (info.type) {
        case TALLY_I8: { int8_t t; memcpy(&t, b, 1); v = t; break; }
        case TALLY_U8: v = b[0]; break;
        case TALLY_I16: { int16_t t; memcpy(&t, b, 2); v = t; break; }
        case TALLY_U16: { uint16_t t; memcpy(&t, b, 2); v = t; break; }
        case TALLY_I32: { int32_t t; memcpy(&t, b, 4); v = t; break; }
        case TALLY_U32: { uint32_t t; memcpy(&t, b, 4); v = t; break; }
        case TALLY_I64: { int64_t t; memcpy(&t, b, 8); v = (double)t; break; }
        case TALLY_U64: { uint64_t t; memcpy(&t, b, 8); v = (double)t; break; }
        case TALLY_F32: { float t; memcpy(&t, b, 4); v = t; break; }
        case TALLY_F64: { memcpy(&v, b, 8); break; }
        }
        x[i] = (float)v;
    }
    free(buf);
    *n = info.count;
    return x;
}
#endif

/* Numbers from a text file (one or more a line, separated by blanks or commas), or a .npy array
 * when the tally command's readers are built in. */
static float *read_numbers(const char *path, uint64_t *n, char *why)
{
    FILE *in = fopen(path, "rb");
    if (!in) { snprintf(why, LAB_WHY, "cannot open %s", path); return NULL; }
#ifdef TALLY_LAB_IO
    {
        uint8_t magic[6];
        size_t got = fread(magic, 1, sizeof magic, in);
        rewind(in);
        if (tio_npy_is_npy(magic, got)) {
            float *x = read_npy(in, path, n, why);
            fclose(in);
            return x;
        }
    }
#endif
    uint64_t cap = 1024, count = 0;
    float *x = malloc(sizeof(float) * cap);
    char tok[128];
    uint64_t line = 1;
    int c = 0;
    while (x) {
        size_t len = 0;
        while ((c = fgetc(in)) != EOF && (c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\n'))
            if (c == '\n') ++line;
        if (c == EOF) break;
        /* a NUL byte is not text, and no number is 127 characters long: stop at once rather
         * than read an endless input (/dev/zero) to its end */
        while (c != EOF && !(c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\n')) {
            if (c == '\0' || len + 1 >= sizeof tok) {
                snprintf(why, LAB_WHY, "%s:%llu: '%.*s%s' is not a number", path,
                         (unsigned long long)line, (int)(len < 40 ? len : 40), tok,
                         c == '\0' ? "\\x00" : "...");
                free(x); fclose(in); return NULL;
            }
            tok[len++] = (char)c;
            c = fgetc(in);
        }
        tok[len] = '\0';
        char *end;
        double v = strtod(tok, &end);
        if (*end || end == tok) {
            snprintf(why, LAB_WHY, "%s:%llu: '%s' is not a number", path, (unsigned long long)line, tok);
            free(x); fclose(in); return NULL;
        }
        if (count == cap) {
            float *g = realloc(x, sizeof(float) * cap * 2);
            if (!g) { free(x); x = NULL; break; }
            x = g; cap *= 2;
        }
        x[count++] = (float)v;
        if (c == '\n') ++line;
    }
    fclose(in);
    if (!x) { snprintf(why, LAB_WHY, "out of memory reading %s", path); return NULL; }
    *n = count;
    return x;
}

typedef struct panel { char *buf; size_t len; double h; } panel;

int tally_lab_explain_main(int argc, char **argv)
{
    const char *op = NULL, *svg = NULL, *input = NULL;
    uint64_t n = 0;
    int have_n = 0, is_float = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(explain_usage, stdout); return 0; }
        else if (!strcmp(a, "--n")) { if (!val) return explain_bad("%s needs a value", a); if (lab_parse_size(val, &n)) return explain_bad("bad --n '%s'", val); have_n = 1; ++i; }
        else if (!strcmp(a, "--type")) {
            if (!val) return explain_bad("%s needs a value", a);
            if (!strcmp(val, "f32") || !strcmp(val, "f64")) is_float = 1;
            else if (!strcmp(val, "u32") || !strcmp(val, "i32") || !strcmp(val, "i64") || !strcmp(val, "u64")) is_float = 0;
            else return explain_bad("--type is u32, i32, i64, u64, f32 or f64, not '%s'", val);
            ++i;
        }
        else if (!strcmp(a, "--svg")) { if (!val) return explain_bad("%s needs a value", a); svg = val; ++i; }
        else if (!strcmp(a, "--input")) { if (!val) return explain_bad("%s needs a value", a); input = val; ++i; }
        else if (a[0] == '-' && a[1]) return explain_bad("unknown option '%s'", a);
        else if (!op) op = a;
        else return explain_bad("one OP only; '%s' is extra", a);
    }
    if (!op) return explain_bad("%s", "which OP? (sum, min, max, sum,min,max, scan, two-pass, warp, accuracy, all)");
    if (!svg) return explain_bad("%s", "--svg FILE is required");

    unsigned tree_ops = 0;
    int want_tree = 0, want_two = 0, want_scan = 0, want_acc = 0, want_warp = 0;
    if (!strcmp(op, "scan")) want_scan = 1;
    else if (!strcmp(op, "warp")) want_warp = 1;
    else if (!strcmp(op, "two-pass")) want_two = 1;
    else if (!strcmp(op, "accuracy")) want_acc = 1;
    else if (!strcmp(op, "tree")) { want_tree = 1; tree_ops = LAB_TREE_SUM | LAB_TREE_MIN | LAB_TREE_MAX; }
    else if (!strcmp(op, "all")) { want_tree = want_two = want_scan = want_acc = want_warp = 1; tree_ops = 7; }
    else {
        char list[128];
        snprintf(list, sizeof list, "%s", op);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
            if (!strcmp(tok, "sum")) tree_ops |= LAB_TREE_SUM;
            else if (!strcmp(tok, "min")) tree_ops |= LAB_TREE_MIN;
            else if (!strcmp(tok, "max")) tree_ops |= LAB_TREE_MAX;
            else return explain_bad("unknown OP '%s' (sum, min, max, scan, two-pass, warp, accuracy, all)", tok);
        }
        want_tree = 1;
        want_two = (tree_ops & LAB_TREE_SUM) != 0;
    }
    if (input && !want_acc) return explain_bad("%s", "--input goes with the accuracy picture");

    panel panels[5];
    int np = 0, ok = 1;
    char why[LAB_WHY] = "";
    float *data = NULL;
    uint64_t data_n = 0;
    if (input && !(data = read_numbers(input, &data_n, why))) {
        fprintf(stderr, "tally explain: %s\n", why);
        return 1;
    }
    for (int which = 0; which < 5 && ok; ++which) {
        int want = which == 0 ? want_tree : which == 1 ? want_two : which == 2 ? want_scan : which == 3 ? want_warp : want_acc;
        if (!want) continue;
        panel *p = &panels[np];
        FILE *m = open_memstream(&p->buf, &p->len);
        if (!m) { snprintf(why, LAB_WHY, "out of memory"); ok = 0; break; }
        int rc;
        if (which == 0) rc = lab_svg_tree(m, tree_ops, have_n ? n : 32, is_float, &p->h, why);
        else if (which == 1) rc = lab_svg_two_pass(m, have_n ? n : (UINT64_C(1) << 20), &p->h, why);
        else if (which == 2) rc = lab_svg_scan(m, have_n ? n : 32, &p->h, why);
        else if (which == 3) /* one block: with `all`, a large n draws its first 1024 lanes */
            rc = lab_svg_warp(m, !have_n ? 64 : (want_tree && n > 1024) ? 1024 : n, &p->h, why);
        else if (data) rc = lab_svg_accuracy(m, data, data_n, input, &p->h, why);
        else rc = lab_svg_accuracy(m, NULL, have_n ? n : UINT64_C(4194304), "prices (seed 001)", &p->h, why);
        fclose(m);
        if (rc) { free(p->buf); ok = 0; break; }
        ++np;
    }
    free(data);
    if (ok) {
        char tmp[4096];
        FILE *f = lab_open_tmp(svg, tmp, sizeof tmp);
        if (!f) { snprintf(why, LAB_WHY, "cannot create %s", svg); ok = 0; }
        else {
            fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
            if (np == 1) {
                fwrite(panels[0].buf, 1, panels[0].len, f);
            } else {
                double total = 0;
                for (int k = 0; k < np; ++k) total += panels[k].h + (k ? 12 : 0);
                fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\">\n", W, total, W, total);
                double y = 0;
                for (int k = 0; k < np; ++k) {
                    fprintf(f, "<g transform=\"translate(0 %.0f)\">\n", y);
                    fwrite(panels[k].buf, 1, panels[k].len, f);
                    fputs("</g>\n", f);
                    y += panels[k].h + 12;
                }
                fputs("</svg>\n", f);
            }
            if (lab_commit(f, tmp, svg, 1)) { snprintf(why, LAB_WHY, "cannot write %s", svg); ok = 0; }
        }
    }
    for (int k = 0; k < np; ++k) free(panels[k].buf);
    if (!ok) { fprintf(stderr, "tally explain: %s\n", why); return 1; }
    return 0;
}
