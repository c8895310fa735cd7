#!/usr/bin/env python3
# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Mechanical fixes for the ament lint tests (flake8 with ament's configuration, pep257, copyright).

Not part of the package: a maintainer runs it after merging branches that add code, then reviews
the diff and finishes what it reports by hand (see docs/lint.md):

    .venv/bin/pip install isort   # once; the import-order step uses it
    .venv/bin/python tools/lint_fix.py [--only KIND ...] [PATH ...]

KIND is one of: copyright, quotes, imports, docstrings (the default is all four, in this order).
PATH defaults to the checked trees (dodo_sim dodo_control launch test bench tools setup.py).
The docstring step prints the docstrings whose summary it had to cut at a clause (summary too
long for one line) or could not make imperative: those want a human sentence.
"""

import argparse
import ast
import io
from pathlib import Path
import re
import sys
import textwrap
import tokenize

MAX_LINE = 99
REPO = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = ('dodo_sim', 'dodo_control', 'launch', 'test', 'bench', 'tools', 'setup.py')

COPYRIGHT_HOLDER = 'dodo_sim developers'
COPYRIGHT_RE = re.compile(r'^# Copyright \d{4}(-\d{4})? ', re.MULTILINE)


def copyright_header():
    """
    Return the notice test/lint/test_copyright.py checks: holder, year, package.xml's <license>.

    (SPDX).
    """
    license_id = re.search(r'<license>([^<]+)</license>', (REPO / 'package.xml').read_text())
    return (f'# Copyright 2026 {COPYRIGHT_HOLDER}\n'
            f'# SPDX-License-Identifier: {license_id.group(1).strip()}\n')


# Google docstring section headers that pydocstyle (all codes but ament's ignores) reads as
# numpy sections wanting dashed underlines: renamed to plain words it does not treat as sections.
SECTION_RENAMES = {
    'Attributes:': 'Fields:',
    'Returns:': 'Return value:',
    'Parameters:': 'Inputs:',
    'Args:': 'Inputs:',
    'Arguments:': 'Inputs:',
    'Raises:': 'Errors raised:',
    'Yields:': 'Items yielded:',
    'Notes:': 'Remarks:',
    'Examples:': 'For example:',
    'References:': 'Sources:',
    'See Also:': 'See also:',
    'Methods:': 'Its methods:',
}

ABBREVIATIONS = ('e.g', 'i.e', 'etc', 'vs', 'cf', 'al', 'Eq', 'eq', 'Fig', 'fig', 'Sec', 'No')


def python_files(paths):
    for path in paths:
        path = (REPO / path)
        if path.is_file():
            yield path
        elif path.is_dir():
            for file in sorted(path.rglob('*.py')):
                if not any(part.startswith(('.', '_')) and part != '__init__.py'
                           for part in file.relative_to(REPO).parts):
                    yield file


# ----------------------------------------------------------------------------- copyright

def fix_copyright(source):
    """Prepend the project's copyright and license notice when a file lacks one."""
    head = source[:2000]
    if COPYRIGHT_RE.search(head):
        return source
    lines = source.splitlines(keepends=True)
    keep = []
    while lines and (lines[0].startswith('#!') or re.match(r'#.*coding[:=]', lines[0])):
        keep.append(lines.pop(0))
    body = ''.join(lines)
    return ''.join(keep) + copyright_header() + ('\n' if body.strip() else '') + body


# ----------------------------------------------------------------------------- quotes

STRING_PREFIX = re.compile(r'^([rRbBuUfF]*)(.*)$', re.DOTALL)


def fix_quotes(source):
    """Single quotes for strings, double quotes for multi-line ones (flake8-quotes Q000-Q003)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.splitlines(keepends=True)
    edits = []
    for tok in tokens:
        if tok.type != tokenize.STRING:
            continue
        prefix, body = STRING_PREFIX.match(tok.string).groups()
        raw = 'r' in prefix.lower()
        new = None
        if body.startswith("'''") and body.endswith("'''") and '"""' not in body[3:-3]:
            inner = body[3:-3]
            if not inner.endswith('"') and not (inner.endswith('\\') and not raw):
                new = prefix + '"""' + inner + '"""'
        elif body.startswith('"') and not body.startswith('"""'):
            inner = body[1:-1]
            unescaped = inner.replace('\\"', '"') if not raw else inner
            if "'" not in inner and (raw is False or '\\"' not in inner):
                new = prefix + "'" + unescaped + "'"
        elif body.startswith("'") and not body.startswith("'''"):
            inner = body[1:-1]
            if "\\'" in inner and '"' not in inner and not raw:
                new = prefix + '"' + inner.replace("\\'", "'") + '"'
        if new is not None and new != tok.string:
            edits.append((tok.start, tok.end, new))
    return apply_edits(lines, edits)


def apply_edits(lines, edits):
    """Replace (row, col)-(row, col) spans (1-based rows, character columns), last first."""
    for (srow, scol), (erow, ecol), new in sorted(edits, reverse=True):
        before = lines[srow - 1][:scol]
        after = lines[erow - 1][ecol:]
        lines[srow - 1:erow] = [before + new + after]
    return ''.join(lines)


# ----------------------------------------------------------------------------- imports

def fix_imports(files):
    """Google import order as flake8-import-order checks it, through isort's google profile."""
    import isort
    config = isort.Config(
        profile='google', line_length=MAX_LINE,
        force_single_line=False,          # keep `from x import a, b` (google style allows it)
        multi_line_output=isort.wrap_modes.WrapModes.GRID,  # visual indent under the paren
        default_section='THIRDPARTY',
        # ament sets no application-import-names: dodo_sim and dodo_control are third party
        known_third_party=['dodo_sim', 'dodo_control'], known_first_party=[],
        float_to_top=False,               # never move imports past code (sys.path set-up)
    )
    for path in files:
        isort.file(path, config=config, show_diff=False)


# ----------------------------------------------------------------------------- docstrings

def _imperative_tables():
    from pydocstyle.wordlists import IMPERATIVE_BLACKLIST, IMPERATIVE_VERBS, stem
    return IMPERATIVE_BLACKLIST, IMPERATIVE_VERBS, stem


def sentence_end(text):
    """Index just past the first sentence's full stop outside brackets, or None."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in '([{':
            depth += 1
        elif ch in ')]}':
            depth = max(0, depth - 1)
        elif ch in '.?!' and depth == 0:
            nxt = text[i + 1:i + 2]
            if nxt not in ('', ' '):
                continue
            word = re.search(r'(\S+)$', text[:i])
            if word and word.group(1).endswith(ABBREVIATIONS):
                continue
            if nxt == ' ' and text[i + 2:i + 3].islower():
                continue
            return i + 1
    return None


def cut_summary(text, width):
    """
    Split a too long first sentence at a clause boundary outside brackets that fits in width.

    Returns (summary, rest) or None when no boundary fits (a human writes that summary).
    """
    best = None
    depth = 0
    for pos, ch in enumerate(text):
        if ch in ')]}':
            depth = max(0, depth - 1)
        if depth == 0 and pos >= 20 and pos + 1 <= width:
            for sep, bonus in (('; ', 40), (': ', 35), (' — ', 40), (' -- ', 40), (' (', 15),
                               (', ', 0)):
                if text.startswith(sep, pos):
                    if sep == ' (' and not _paren_ends_sentence(text, pos + 1):
                        continue  # a summary cut before '(' must not drop what follows ')'
                    if best is None or pos + bonus > best[0]:
                        best = (pos + bonus, pos, sep)
        if ch in '([{':
            depth += 1
    if best is None:
        return None
    _, pos, sep = best
    head = text[:pos].rstrip(',;:')
    rest = text[pos + len(sep):] if sep != ' (' else text[pos + 1:]
    if sep != ' (' and rest[:1].islower():
        rest = rest[:1].upper() + rest[1:]
    return head + '.', rest


def _paren_ends_sentence(text, open_pos):
    depth = 0
    for i in range(open_pos, len(text)):
        depth += {'(': 1, ')': -1}.get(text[i], 0)
        if depth == 0:
            return text[i + 1:].strip() in ('', '.')
    return False


def make_imperative(summary, node, report, where):
    blacklist, verbs, stem = _imperative_tables()
    words = summary.split()
    if not words:
        return summary
    first = re.sub(r'[^\w]', '', words[0])
    low = first.lower()
    forms = verbs.get(stem(low))
    if low not in blacklist and not (forms and low not in forms):
        return summary
    if forms and low not in forms and low not in blacklist:
        best = max(forms, key=lambda f: len(_common_prefix(low, f)))
        return summary.replace(first, best.capitalize(), 1)
    returns_value = any(isinstance(n, ast.Return) and n.value is not None
                        for n in ast.walk(node))
    yields = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(node))
    if low in ('the', 'a', 'an', 'this', 'these', 'what', 'true', 'some', 'number', 'data',
               'new', 'current', 'default', 'same', 'result', 'reference', 'base', 'unit',
               'dict', 'dictionary', 'string', 'collection') and (returns_value or yields):
        verb = 'Yield' if yields and not returns_value else 'Return'
        lead = summary[0].lower() + summary[1:] if low in ('the', 'a', 'an', 'these', 'some',
                                                           'this') else summary
        if low == 'true':
            lead = summary  # "True when x" -> "Return True when x"
        return f'{verb} {lead}'
    report.append(f'{where}: not imperative, rephrase by hand: {summary[:70]!r}')
    return summary


def _common_prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def docstring_nodes(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                yield node, body[0].value


def split_paragraphs(lines):
    paras, cur = [], []
    for line in lines:
        if line.strip():
            cur.append(line)
        elif cur:
            paras.append(cur)
            cur = []
    if cur:
        paras.append(cur)
    return paras


LIST_ITEM = re.compile(r'^\s*([-*+•]|\d+[.)]|\w+ ?:|:\w+)')


def hand_summaries():
    """(paragraph start, summary) pairs of tools/lint_summaries.txt."""
    pairs = []
    for line in (REPO / 'tools' / 'lint_summaries.txt').read_text().splitlines():
        if line.strip() and not line.startswith('#'):
            key, summary = line.split('\t')
            pairs.append((key, summary))
    return pairs


def rebuild_docstring(raw, indent, node, report, where):
    """Return the docstring text (without quotes) in ament's pep257 layout, or None to keep."""
    lines = raw.split('\n')
    first = lines[0].strip()
    rest = lines[1:]
    margin = min((len(ln) - len(ln.lstrip()) for ln in rest if ln.strip()), default=0)
    rest = [ln[margin:].rstrip() for ln in rest]
    body_lines = ([first] if first else []) + rest
    while body_lines and not body_lines[0].strip():
        body_lines.pop(0)
    while body_lines and not body_lines[-1].strip():
        body_lines.pop()
    if not body_lines:
        return None
    # Rename google section headers (see SECTION_RENAMES).
    body_lines = [(' ' * (len(ln) - len(ln.lstrip())) + SECTION_RENAMES[ln.strip()])
                  if ln.strip() in SECTION_RENAMES else ln for ln in body_lines]
    if body_lines[0].strip() in SECTION_RENAMES.values():
        # The docstring opened with a section header (google "Attributes:"): a summary goes
        # above it and its items stay indented under it.
        kind = 'fields' if isinstance(node, ast.ClassDef) else 'details'
        name = getattr(node, 'name', 'module')
        items = body_lines[1:]
        shift = '    ' if items and not items[0].startswith(' ') else ''
        body_lines = [f'The {kind} of ``{name}``.', '', body_lines[0]] + [
            (shift + ln if ln.strip() else ln) for ln in items]
    # The first paragraph: the lines up to a blank line, an indented line or a list item.
    para_len = 1
    while para_len < len(body_lines):
        ln = body_lines[para_len]
        if not ln.strip() or ln.startswith(' ') or LIST_ITEM.match(ln) and ':' not in ln[:3]:
            break
        para_len += 1
    para = ' '.join(ln.strip() for ln in body_lines[:para_len])
    tail = body_lines[para_len:]
    while tail and not tail[0].strip():
        tail.pop(0)
    width = MAX_LINE - len(indent)
    end = sentence_end(para)
    override = next((summ for key, summ in hand_summaries() if para.startswith(key)), None)
    if override is not None:
        summary, remainder = override, para
    elif end is not None and end <= width:
        summary, remainder = para[:end], para[end:].strip()
    elif end is None and len(para) <= width - 1:
        summary, remainder = para.rstrip(':;,') + '.', ''
        if summary.endswith('..'):
            summary = summary[:-1]
    else:
        sentence = para[:end] if end else para
        cut = cut_summary(sentence, width - 1)
        if cut is None:
            report.append(f'{where}: no clause boundary fits, write a summary: {para[:70]!r}')
            return None
        else:
            summary, first_rest = cut
            remainder = (first_rest + ' ' + para[len(sentence):].strip()).strip()
            report.append(f'{where}: summary cut at a clause, check: {summary!r}')
    if summary.endswith(':'):
        summary = summary[:-1] + '.'
    if summary[:1].islower() and summary.split()[0].isalpha():
        summary = summary[:1].upper() + summary[1:]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            and not node.name.startswith('test') \
            and not any(getattr(d, 'id', getattr(d, 'attr', '')) in ('property', 'setter',
                                                                     'cached_property')
                        for d in node.decorator_list):
        summary = make_imperative(summary, node, report, where)
    if not remainder and not tail and len(indent) + len(summary) + 6 > MAX_LINE:
        # A one-line docstring must fit on its line with its quotes (D200).
        cut = cut_summary(summary[:-1] if summary.endswith('.') else summary, width - 7)
        if cut is None:
            report.append(f'{where}: one-line docstring too long with quotes: {summary[:70]!r}')
        else:
            summary, remainder = cut[0], cut[1] + ('.' if summary.endswith('.') else '')
            report.append(f'{where}: summary cut at a clause, check: {summary!r}')
    out = [summary]
    if remainder:
        out.append('')
        out.extend(textwrap.wrap(remainder, width=width, break_long_words=False,
                                 break_on_hyphens=False))
    if tail:
        out.append('')
        out.extend(tail)
    if len(out) == 1 and len(indent) + len(summary) + 6 <= MAX_LINE:
        return summary
    text = '\n'.join((indent + ln) if ln else '' for ln in out)
    return '\n' + text + '\n' + indent


def fix_docstrings(source, path, report):
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits = []
    for node, const in docstring_nodes(tree):
        srow, erow = const.lineno, const.end_lineno
        scol = len(lines[srow - 1].encode()[:const.col_offset].decode())
        ecol = len(lines[erow - 1].encode()[:const.end_col_offset].decode())
        if srow == erow:
            src = lines[srow - 1][scol:ecol]
        else:
            src = lines[srow - 1][scol:] + ''.join(lines[srow:erow - 1]) + \
                lines[erow - 1][:ecol]
        prefix, body = STRING_PREFIX.match(src).groups()
        if body[:3] not in ('"""', "'''") or 'f' in prefix.lower() or 'b' in prefix.lower():
            if body[:1] in '"\'' and body[:3] not in ('"""', "'''"):
                body = '"""' + body[1:-1] + '"""'
            else:
                continue
        raw = body[3:-3]
        indent = re.match(r'\s*', lines[srow - 1]).group(0)
        where = f'{path.relative_to(REPO)}:{srow}'
        new_raw = rebuild_docstring(raw, indent, node, report, where)
        if new_raw is None:
            continue
        if '\\' in new_raw and 'r' not in prefix.lower():
            report.append(f'{where}: backslash in docstring, check r-prefix (D301)')
        new = prefix + '"""' + new_raw + '"""'
        if new != src:
            edits.append(((srow, scol), (erow, ecol), new))
    return apply_edits(lines, edits)


# ----------------------------------------------------------------------------- main

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('paths', nargs='*', default=list(DEFAULT_PATHS))
    parser.add_argument('--only', nargs='+', default=['copyright', 'quotes', 'imports',
                                                      'docstrings'])
    args = parser.parse_args(argv)
    files = list(python_files(args.paths))
    report = []
    for kind in args.only:
        if kind == 'imports':
            fix_imports(files)
            continue
        for path in files:
            source = path.read_text()
            if kind == 'copyright':
                new = fix_copyright(source)
            elif kind == 'quotes':
                new = fix_quotes(source)
            elif kind == 'docstrings':
                new = fix_docstrings(source, path, report)
            else:
                parser.error(f'unknown kind {kind}')
            if new != source:
                ast.parse(new)  # never write a file that no longer parses
                path.write_text(new)
    for line in report:
        print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
