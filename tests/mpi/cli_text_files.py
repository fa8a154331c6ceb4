"""Text files for cli_same.sh: tally-mpi against tally on CSV, TSV and whitespace text.

Usage: cli_text_files.py DIR. Writes, into DIR:
  q.csv      a header with quoted names; per record an id, a quoted note that spans lines and
             holds what looks like records ("7,8.5\\n9,10"), delimiters and "" escapes, and
             numeric fields whose form changes late in the file (more decimals, decimals after
             integers, a float among integers, a decimal that makes 18-digit integers overflow
             at the new scale, NaN and infinities, values whose squares overflow). The notes take most of
             the bytes: for 2, 3, 4 and 7 ranks, at least one cut between the ranks' equal byte
             pieces (and most of them) lands inside a quoted field with newlines on both sides
             of the cut (checked here), so a rank that cut at a newline alone would misread
             the file.
  t.tsv      the same idea with tabs; w.txt whitespace-separated text (-W);
  skip.csv   empty fields and junk spread over the file, for --skip-invalid (more than 10, so
             the cap on named skips matters);
  bad_*.csv  one defect each, late in the file: a value that is not a number (and a second one
             after it), an unterminated quote, a short record, a NUL byte, a decimal in a field
             that and/or/xor need as integers;
  hdr.csv    a header and no data.
Deterministic (a fixed seed)."""
import os, random, sys

d = sys.argv[1]
rng = random.Random(21)
RANKS = (2, 3, 4, 7)


def note(i, sep):
    parts = ['fake %d%s%d.5' % (i, sep, i + 1), '%d%s%d' % (i + 2, sep, i + 3), 'say ""hi""%s ok' % sep,
             'x' * rng.randrange(40, 90)]
    rng.shuffle(parts)
    return '"' + '\n'.join(parts) + '\n"'


def quoted_spans(text):
    """[start, end) of every quoted field (RFC 4180, quotes only at a field's start)."""
    spans, i, n, field_start = [], 0, len(text), True
    while i < n:
        c = text[i]
        if field_start and c == '"':
            s = i
            i += 1
            while i < n:
                if text[i] == '"':
                    if i + 1 < n and text[i + 1] == '"':
                        i += 2
                        continue
                    break
                i += 1
            spans.append((s, i + 1))
            i += 1
            field_start = False
            continue
        field_start = c in ',\t\n'
        i += 1
    return spans


def check_cuts(text, data_start, name):
    """For every N, a cut of the data into N equal pieces falls inside a quoted field with
    newlines on both sides of it; and most cuts do."""
    b = text.encode()
    spans = quoted_spans(b.decode('latin-1'))
    inside_all = 0
    for n in RANKS:
        inside_n = 0
        for r in range(1, n):
            cut = data_start + (len(b) - data_start) * r // n
            inside_n += any(s[0] < cut < s[1] - 1 and b'\n' in b[s[0]:cut] and b'\n' in b[cut:s[1]]
                            for s in spans)
        if inside_n == 0:
            return False
        inside_all += inside_n
    return inside_all * 3 >= 2 * sum(n - 1 for n in RANKS)


def write(name, text):
    with open(os.path.join(d, name), 'w', newline='') as f:
        f.write(text)


def q_csv(rows, sep):
    hdr = sep.join(['id', '"note, with\n""quotes"""', 'price', 'mixed', 'big', 'sci', 'fl', 'huge', 'flag'])
    lines = []
    for i in range(rows):
        late = i >= rows * 6 // 10
        price = '%d.%02d' % (rng.randrange(0, 500), rng.randrange(100))
        if i == rows - 3:
            price = '0.0001'                    # four decimals, in the last piece only
        if i % 7 == 3:
            price = '"%s"' % price
        mixed = '%d.%d' % (rng.randrange(-50, 50), rng.randrange(10)) if late else str(rng.randrange(-50, 50))
        big = '400000000000000000' if i != rows - 2 else '0.5'   # overflows int64 at scale 1
        sci = str(rng.randrange(1000)) if i != rows * 9 // 10 else '1e3'
        fl = repr(rng.uniform(-1e6, 1e6))
        if i == rows // 2:
            fl = 'nan'
        if i == rows // 3:
            fl = '-inf'
        huge = '%.17g' % (5e155 + rng.uniform(-1, 1) * 1e153)   # x^2 overflows, the variance not
        flag = rng.choice(['1', '1', '1', '-1', '2']) if i % 9 == 0 else '1'
        lines.append(sep.join([str(i + 1), note(i, sep), price, mixed, big, sci, fl, huge, flag]))
    return hdr + '\n', '\n'.join(lines) + '\n'


for name, sep in (('q.csv', ','), ('t.tsv', '\t')):
    rows = 60
    for attempt in range(200):
        hdr, body = q_csv(rows, sep)
        if check_cuts(hdr + body, len(hdr.encode()), name):
            break
        rows += 1
    else:
        sys.exit('%s: no layout puts every cut inside a quoted field' % name)
    write(name, hdr + body)

# whitespace text: runs of blanks, decimals late, a float late
w = []
for i in range(300):
    a = str(rng.randrange(-999, 999))
    b = '%d.%d' % (rng.randrange(100), rng.randrange(10)) if i > 200 else str(rng.randrange(100))
    c = repr(rng.uniform(-1, 1)) if i == 250 else str(rng.randrange(10 ** 12))
    w.append(' ' * rng.randrange(3) + (' ' * rng.randrange(1, 4)).join([a, b, c]) + ' ' * rng.randrange(2))
write('w.txt', '\n'.join(w) + '\n')

# empty fields and junk for --skip-invalid (CRLF endings on some records)
s = ['a,b']
for i in range(400):
    a = str(rng.randrange(100)) if i % 41 != 7 else ''     # the first 10 skips span the ranks
    b = '%d.5' % rng.randrange(100) if i % 53 != 11 else 'junk'
    s.append(a + ',' + b + ('\r' if i % 5 == 0 else ''))
write('skip.csv', '\n'.join(s) + '\n')

# one defect each, late in the file (past the first rank's share for every rank count); the
# note field (not selected) holds quoted newlines
def base(rows=400):
    return ['v,note,w'] + ['%d,"%d\n%d",%d' % (rng.randrange(100), i, i, i) for i in range(rows)]
b = base(); b[300] = 'x1,"a",3'; b[350] = 'y,"b",2'
write('bad_value.csv', '\n'.join(b) + '\n')
b = base(); b += ['"unterminated,1,2', '3,4,5']
write('bad_quote.csv', '\n'.join(b) + '\n')
b = base(); b[330] = '5'
write('bad_short.csv', '\n'.join(b) + '\n')
b = base(); b[290] = '7,"",1\0'
write('bad_nul.csv', '\n'.join(b) + '\n')
b = base(); b[310] = '2.5,"",3'
write('bad_bitwise.csv', '\n'.join(b) + '\n')
write('hdr.csv', 'a,"b\nc"\n')
