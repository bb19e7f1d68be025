#!/usr/bin/env python3
"""Extract the runnable examples of README.md, doc/methods.md and the man
pages, run them, and compare what they print with what the document shows.

The convention (README.md says it to readers before its first example, and
gpc(7) in PIPELINES):

* A runnable example is a code block whose first line starts with "$ ": in
  Markdown an indented or fenced block, in troff a .EX/.EE or .nf/.fi
  display.  Every "$ " line starts a command; the lines after it belong to
  the same command for as long as the shell would still read on (an open
  quote, a trailing | or \\, a for loop before its done), and the lines after
  the command, up to the next "$ " line, are what it prints (standard output
  and standard error together).  A command with no lines under it may print
  anything.
* In the shown output, a line "..." stands for any number of lines, and a
  line ending in " ..." for any rest of its line after a blank (whole
  words, never the end of a number); every other line is
  compared whole, character for character (trailing blanks aside), numbers
  included.  So a document shows numbers as the tools print them for people
  (gpc(7): NUMBERS), never rounded by hand.  The one allowance: a number
  shown with FULL_DIGITS (12) or more significant digits, as the tools
  write matrices for a round trip, matches a printed one within FULL_RTOL
  (1e-9) of it, since such numbers differ in their last digits between
  CPUs (the vector library's and OpenBLAS's kernels differ by instruction
  set: gpc(7), DETERMINISM).
* A block of commands that is not meant to run (it needs the user's own
  data, or hours) has no prompts and is preceded by a marker that names the
  reason: in Markdown the line "<!-- example: not run: REASON -->", in troff
  the comment '.\\" example: not run: REASON'.  The text around it should
  say so to the reader too.  In a Markdown document (README.md,
  doc/methods.md, repro/README.md, bench/README.md) and in the EXAMPLES
  (gpc(7): PIPELINES) sections of the man pages, a block that looks like commands
  (its first line starts with a tool or shell keyword) and has neither
  prompts nor the marker is an error, so no example can quietly stop being
  run.
* Every example of a document runs in order in one shell, so a later
  example may use the files an earlier one made.  The shell starts in a
  stand-in for the root of a fresh clone (bin/ and data/ linked to the
  real ones, nothing else), with bin/ first on PATH and TMPDIR in the
  scratch directory.  Pipelines run with pipefail, so a failing command
  inside one is caught; a status of 141 (a writer stopped by SIGPIPE after
  its reader, e.g. head, had what it needed) counts as success.
  The first example of README.md and of doc/methods.md moves to a scratch
  directory itself; for a man page the runner first does the same
  (`cd "$(mktemp -d)" && ln -s "$OLDPWD/data" data`, as gpc(7) says).

Usage: examples.py list DOC...   the examples and their commands
       examples.py run DOC...    run them; exit 1 and name the document,
                                 the example and the line of each failure
       examples.py run-status DOC...
                                 run them, checking only that every command
                                 succeeds (for builds that round otherwise)
       examples.py lint DOC...   only the check for unmarked blocks
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

NOT_RUN_MD = re.compile(r'^<!--\s*example:\s*not run:.*-->\s*$')
NOT_RUN_TROFF = re.compile(r'^\.\\"\s*example:\s*not run:')
# A block whose first line starts with one of these is commands, not a table
# of numbers or a file format.
COMMAND_START = re.compile(
    r'^(gpc-(kernel|fit|predict|evidence|hmc|scale|score|combine|plot|folds|cv)(\s|$)'
    r'|awk\b|sed\b|for\b|printf\b|paste\b|cut\b|python3\b|make\b|cd\b|export\b)')
EXAMPLE_SECTIONS = ('EXAMPLES', 'PIPELINES')
MAN_PRELUDE = 'cd "$(mktemp -d)" && ln -s "$OLDPWD/data" data'


class Block:
    """A code block: its lines (unescaped) and the document line of each."""

    def __init__(self, lines, linenos, marked, in_examples):
        self.lines = lines
        self.linenos = linenos
        self.marked = marked
        self.in_examples = in_examples

    def runnable(self):
        return bool(self.lines) and self.lines[0].startswith('$ ')


# ---------------------------------------------------------------- Markdown

def markdown_blocks(text):
    """Indented (four spaces) and fenced code blocks of a Markdown text."""
    lines = text.split('\n')
    blocks = []
    i = 0
    prev_nonblank = ''
    while i < len(lines):
        line = lines[i]
        fence = re.match(r'^(```+|~~~+)', line)
        if fence:
            body, nos = [], []
            i += 1
            while i < len(lines) and not lines[i].startswith(fence.group(1)):
                body.append(lines[i])
                nos.append(i + 1)
                i += 1
            blocks.append(Block(body, nos, bool(NOT_RUN_MD.match(prev_nonblank)), True))
            prev_nonblank = ''
            i += 1
            continue
        if line.startswith('    ') and prev_is_blank(lines, i):
            body, nos = [], []
            while i < len(lines) and (lines[i].startswith('    ') or
                                      (lines[i].strip() == '' and
                                       next_indented(lines, i))):
                body.append(lines[i][4:])
                nos.append(i + 1)
                i += 1
            blocks.append(Block(body, nos, bool(NOT_RUN_MD.match(prev_nonblank)), True))
            prev_nonblank = ''
            continue
        if line.strip():
            prev_nonblank = line
        i += 1
    return blocks


def prev_is_blank(lines, i):
    return i == 0 or lines[i - 1].strip() == ''


def next_indented(lines, i):
    j = i
    while j < len(lines) and lines[j].strip() == '':
        j += 1
    return j < len(lines) and lines[j].startswith('    ')


# ------------------------------------------------------------------ troff

TROFF_ESCAPES = [
    (r'\(aq', "'"), (r'\(dq', '"'), (r'\(ga', '`'), (r'\(ti', '~'),
    (r'\(ha', '^'), (r'\(rs', '\\'), (r'\(em', '--'), (r'\(en', '-'),
    (r'\-', '-'), (r'\&', ''), (r'\%', ''), (r'\|', ''), (r'\^', ''),
    (r'\ ', ' '), (r'\~', ' '),
]


def troff_unescape(line):
    out = []
    i = 0
    while i < len(line):
        if line[i] == '\\':
            if line.startswith('\\e', i):
                out.append('\\')
                i += 2
                continue
            for esc, rep in TROFF_ESCAPES:
                if line.startswith(esc, i):
                    out.append(rep)
                    i += len(esc)
                    break
            else:
                raise ValueError('unknown troff escape in example: %r' % line[i:i + 4])
            continue
        out.append(line[i])
        i += 1
    return ''.join(out)


def troff_blocks(text):
    """.EX/.EE and .nf/.fi displays, with the section each is in."""
    lines = text.split('\n')
    blocks = []
    section = ''
    marked = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('.SH'):
            section = line[3:].strip().strip('"')
        if NOT_RUN_TROFF.match(line):
            marked = True
        if line.strip() in ('.EX', '.nf'):
            end = '.EE' if line.strip() == '.EX' else '.fi'
            body, nos = [], []
            i += 1
            while i < len(lines) and lines[i].strip() != end:
                if not lines[i].startswith('.') or lines[i].startswith('.\\"'):
                    if not lines[i].startswith('.\\"'):
                        body.append(lines[i])
                        nos.append(i + 1)
                i += 1
            in_ex = section in EXAMPLE_SECTIONS
            if in_ex or (body and body[0].startswith('$ ')):
                body = [troff_unescape(b) for b in body]
            blocks.append(Block(body, nos, marked, in_ex))
            marked = False
        elif line.strip() and not line.startswith('.') and not NOT_RUN_TROFF.match(line):
            marked = False  # the marker must come just before its display
        i += 1
    return blocks


def document_blocks(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    if path.endswith('.md'):
        return markdown_blocks(text)
    return troff_blocks(text)


# ---------------------------------------------------------------- examples

class Command:
    def __init__(self, text, lineno, expected, expected_linenos):
        self.text = text
        self.lineno = lineno
        self.expected = expected
        self.expected_linenos = expected_linenos


def shell_incomplete(text):
    """True when bash would read on after TEXT (open quote, loop, |, \\)."""
    if text.endswith('\\'):
        return True  # bash -n takes a backslash at the end as nothing
    r = subprocess.run(['bash', '-n', '-c', text], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    return r.returncode != 0 and ('unexpected end of file' in r.stderr or
                                  'unexpected EOF while looking for matching' in r.stderr)


def parse_example(block):
    """The commands of a runnable block, each with the output shown under it."""
    cmds = []
    i = 0
    lines, nos = block.lines, block.linenos
    while i < len(lines):
        if not lines[i].startswith('$ '):
            raise ValueError('line %d: output before the first command' % nos[i])
        text, lineno = lines[i][2:], nos[i]
        i += 1
        while shell_incomplete(text):
            if i >= len(lines) or lines[i].startswith('$ '):
                raise ValueError('line %d: the command does not end' % lineno)
            text += '\n' + lines[i]
            i += 1
        expected, enos = [], []
        while i < len(lines) and not lines[i].startswith('$ '):
            expected.append(lines[i].rstrip())
            enos.append(nos[i])
            i += 1
        while expected and expected[-1] == '':
            expected.pop()
            enos.pop()
        cmds.append(Command(text, lineno, expected, enos))
    return cmds


def lint(path, blocks):
    problems = []
    for b in blocks:
        if not b.lines or b.runnable() or b.marked or not b.in_examples:
            continue
        first = b.lines[0].lstrip()
        if COMMAND_START.match(first):
            problems.append('%s:%d: commands without "$ " prompts and without a '
                            '"not run" marker' % (path, b.linenos[0]))
    return problems


# -------------------------------------------------------------- comparison

FULL_DIGITS = 12
FULL_RTOL = 1e-9
NUMBER = re.compile(r'([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)')
BLANKS = re.compile(r'(\s+)')


def significant_digits(number):
    mantissa = re.split('[eE]', number)[0].lstrip('+-').replace('.', '')
    return len(mantissa.lstrip('0'))


def same_number(shown, printed):
    """Equal, or within FULL_RTOL where SHOWN has FULL_DIGITS or more."""
    if shown == printed:
        return True
    if significant_digits(shown) < FULL_DIGITS:
        return False
    x, y = float(shown), float(printed)
    return abs(x - y) <= FULL_RTOL * max(abs(x), abs(y))


def same_text(shown, printed):
    """The same text between the numbers, and the same numbers (same_number)."""
    if shown == printed:
        return True
    s, p = NUMBER.split(shown), NUMBER.split(printed)
    return len(s) == len(p) and all(
        same_number(a, b) if k % 2 else a == b for k, (a, b) in enumerate(zip(s, p)))


def line_matches(shown, printed):
    """The whole line (same_text); a shown line ending in " ..." matches any
    printed line whose first words are the ones before the "...", so that
    only whole words are left out: "-106.58 ..." does not match
    "-106.5811 3.95"."""
    if shown.endswith(' ...'):
        words = BLANKS.split(shown[:-3])  # ends in a blank, so in ''
        head = BLANKS.split(printed)[:len(words) - 1]
        return len(head) == len(words) - 1 and all(
            same_text(a, b) for a, b in zip(words, head))
    return same_text(shown, printed)


def compare(expected, printed):
    """None when PRINTED is what EXPECTED shows, else (index into EXPECTED or
    len(EXPECTED) for missing/extra lines, the printed line or None)."""
    memo = {}

    def match(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(expected):
            res = None if j == len(printed) else (i, printed[j])
        elif expected[i] == '...':
            res = match(i + 1, j)
            if res is not None and j < len(printed):
                alt = match(i, j + 1)
                if alt is None or alt[0] > res[0]:
                    res = alt
        elif j < len(printed) and line_matches(expected[i], printed[j]):
            res = match(i + 1, j + 1)
        else:
            res = (i, printed[j] if j < len(printed) else None)
        memo[key] = res
        return res

    sys.setrecursionlimit(max(10000, 4 * (len(expected) + len(printed)) + 100))
    return match(0, 0)


# ----------------------------------------------------------------- running

def runnable_examples(path):
    """[(example number, first line, [Command])] of a document."""
    out = []
    blocks = document_blocks(path)
    n = 0
    for b in blocks:
        if b.runnable():
            n += 1
            out.append((n, b.linenos[0], parse_example(b)))
    return out


def make_clone_stand_in(repo, scratch):
    clone = os.path.join(scratch, 'clone')
    os.mkdir(clone)
    for name in ('bin', 'data'):
        os.symlink(os.path.join(repo, name), os.path.join(clone, name))
    return clone


def build_script(doc, examples, outdir):
    """One bash script that runs every command of the document in order,
    each one's output to its own file and its status after it; it stops at
    the first command that fails."""
    parts = ['set -o pipefail', 'export PATH="$PWD/bin:$PATH"']
    if not doc.endswith('.md'):
        parts.append(MAN_PRELUDE)
    k = 0
    for _, _, cmds in examples:
        for c in cmds:
            k += 1
            out = shlex.quote(os.path.join(outdir, '%d.out' % k))
            rc = shlex.quote(os.path.join(outdir, '%d.rc' % k))
            parts.append('t0=$EPOCHREALTIME\n{\n%s\n} > %s 2>&1 < /dev/null\n'
                         'st=$?; echo "$st $t0 $EPOCHREALTIME" > %s; '
                         '[ "$st" -eq 0 ] || [ "$st" -eq 141 ] || exit 0' % (c.text, out, rc))
    return '\n'.join(parts) + '\n'


def run_document(doc, repo, verbose, outputs=True):
    examples = runnable_examples(doc)
    name = os.path.relpath(doc, repo)
    failures = []
    scratch = tempfile.mkdtemp(prefix='gpc-examples.')
    try:
        clone = make_clone_stand_in(repo, scratch)
        outdir = os.path.join(scratch, 'outputs')
        os.mkdir(outdir)
        env = dict(os.environ, TMPDIR=scratch, LC_ALL='C')
        env.setdefault('OMP_WAIT_POLICY', 'passive')
        script = build_script(doc, examples, outdir)
        t0 = time.time()
        subprocess.run(['bash', '-c', script], cwd=clone, env=env,
                       stdin=subprocess.DEVNULL)
        elapsed = time.time() - t0
        k = 0
        stopped = False
        for n, first, cmds in examples:
            where = '%s: example %d (line %d)' % (name, n, first)
            for c in cmds:
                k += 1
                rc_path = os.path.join(outdir, '%d.rc' % k)
                if stopped:
                    break
                if not os.path.exists(rc_path):
                    failures.append('%s: line %d: the command did not run (the shell '
                                    'stopped before it):\n    %s' % (where, c.lineno, c.text))
                    stopped = True
                    break
                with open(rc_path) as f:
                    fields = f.read().split()
                status = int(fields[0])
                seconds = float(fields[2]) - float(fields[1])
                with open(os.path.join(outdir, '%d.out' % k), errors='replace') as f:
                    printed = [l.rstrip() for l in f.read().split('\n')]
                while printed and printed[-1] == '':
                    printed.pop()
                if verbose:
                    print('# %s: line %d: status %d, %.1f s' % (where, c.lineno, status, seconds))
                # 141: a writer ended by SIGPIPE because its reader, which
                # succeeded, had read enough (| head -n 4): not a failure
                if status != 0 and status != 141:
                    failures.append('%s: line %d: exit status %d from\n    %s\nwhich printed\n%s'
                                    % (where, c.lineno, status, c.text.replace('\n', '\n    '),
                                       indent(printed[-15:])))
                    stopped = True
                    break
                if not c.expected or not outputs:
                    continue
                bad = compare(c.expected, printed)
                if bad is not None:
                    i, got = bad
                    if i < len(c.expected):
                        failures.append('%s: line %d: shows\n    %s\nbut the command '
                                        '(line %d) printed\n    %s\nwhole output:\n%s'
                                        % (where, c.expected_linenos[i], c.expected[i],
                                           c.lineno, got if got is not None else '(nothing more)',
                                           indent(printed[:30])))
                    else:
                        failures.append('%s: command at line %d printed more than shown, '
                                        'from\n    %s\nwhole output:\n%s'
                                        % (where, c.lineno, got, indent(printed[:30])))
        if verbose:
            print('# %s: %d examples, %d commands, %.1f s' % (name, len(examples), k, elapsed))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return failures


def indent(lines):
    return '\n'.join('    | ' + l for l in lines) if lines else '    | (nothing)'


def main(argv):
    if len(argv) < 3 or argv[1] not in ('list', 'run', 'run-status', 'lint'):
        sys.stderr.write(__doc__.split('Usage: ')[1])
        return 2
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mode, docs = argv[1], argv[2:]
    failures = []
    for doc in docs:
        path = os.path.abspath(doc)
        try:
            blocks = document_blocks(path)
            failures += lint(os.path.relpath(path, repo), blocks)
            if mode == 'list':
                for n, first, cmds in runnable_examples(path):
                    print('== %s example %d (line %d)' % (doc, n, first))
                    for c in cmds:
                        print('$ ' + c.text.replace('\n', '\n> '))
                        for e in c.expected:
                            print('  ' + e)
            elif mode in ('run', 'run-status'):
                failures += run_document(path, repo, verbose=True, outputs=mode == 'run')
        except ValueError as e:
            failures.append('%s: %s' % (os.path.relpath(path, repo), e))
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
