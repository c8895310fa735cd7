# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
YAML from outside (params files, study files, a bag's metadata.yaml), read at a bounded cost.

PyYAML's ``safe_load`` builds plain data, but it takes whatever the text asks for:

* an *alias bomb* (``a: &a [x, x]``, ``b: &b [*a, *a]``, ... nine levels deep) is a few hundred
  bytes that stand for 10^9 nodes; ``safe_load`` shares the objects, and the first check that walks
  them (a ``dict`` comparison, a copy, a print) hangs;
* a key written twice silently takes the last value (``apex_height: 1.1`` ... ``apex_height:
  0.9``), where the user meant one of them;
* a file of gigabytes is read whole.

:func:`load_yaml` composes the document (nodes, aliases not yet expanded), refuses a text over
:data:`MAX_YAML_BYTES`, a document whose expanded size (every alias counted as the nodes it stands
for) passes :data:`MAX_EXPANDED_NODES`, and a mapping with a key written twice (naming the key and
its lines), then constructs it with PyYAML's safe constructor. Merge keys (``<<: *defaults``) keep
their meaning: the mapping's own keys override the merged ones. Every refusal is a
:class:`YamlInputError` (a ValueError) with a one-line message.
"""
from __future__ import annotations

import yaml

#: Largest YAML text read, bytes (the package's params and study files are < 10 kB).
MAX_YAML_BYTES = 4 * 2**20
#: Largest document, in nodes with every alias expanded (a params file has a few hundred).
MAX_EXPANDED_NODES = 100_000
#: Deepest nesting of collections (PyYAML composes recursively).
MAX_DEPTH = 100


class YamlInputError(ValueError):
    """The YAML text cannot be used; a one-line message naming the source and the problem."""


class _Loader(yaml.SafeLoader):
    """SafeLoader whose documents are checked before they are constructed."""

    def __init__(self, stream, source: str):
        super().__init__(stream)
        self.source = source

    def construct_document(self, node):
        _check_document(node, self.source)
        return super().construct_document(node)

    def compose_node(self, parent, index):
        # PyYAML composes recursively: a deep document would end in a RecursionError
        depth = getattr(self, '_depth', 0)
        if depth > MAX_DEPTH:
            raise YamlInputError(f'{self.source}: nested deeper than {MAX_DEPTH} levels '
                                 f'(line {self.peek_event().start_mark.line + 1})')
        self._depth = depth + 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth = depth


def _check_document(root, source: str) -> None:
    """Refuse a document too large once its aliases are expanded, or with a duplicated key."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()       # nodes whose children are being sized: the current path
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[id(node)] = 1
            continue
        children = ([n for pair in node.value for n in pair]
                    if isinstance(node, yaml.MappingNode) else list(node.value))
        if not children_done:
            if id(node) in open_nodes:
                raise YamlInputError(f'{source}: an alias refers to its own anchor (line '
                                     f'{node.start_mark.line + 1}); refused')
            if isinstance(node, yaml.MappingNode):
                _check_keys(node, source)
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        open_nodes.discard(id(node))
        sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
        if sizes[id(node)] > MAX_EXPANDED_NODES:
            raise YamlInputError(f'{source}: the document stands for more than '
                                 f'{MAX_EXPANDED_NODES} values once its aliases (*name) are '
                                 f'expanded (line {node.start_mark.line + 1}); refused')


def _check_keys(node, source: str) -> None:
    seen: dict = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == 'tag:yaml.org,2002:merge':
            continue
        if key.value in seen:
            raise YamlInputError(f"{source}: key '{key.value}' is given twice (lines "
                                 f'{seen[key.value] + 1} and {key.start_mark.line + 1}); keep '
                                 f'one')
        seen[key.value] = key.start_mark.line


def load_yaml(text: str | bytes, source: str):
    """
    Return the data of one YAML document (None for an empty one), checked as the module says.

    ``source`` names the text in messages (a path). Raises :class:`YamlInputError`.
    """
    if len(text) > MAX_YAML_BYTES:
        raise YamlInputError(f'{source}: {len(text)} bytes, more than the {MAX_YAML_BYTES} a '
                             f'YAML file may have here')
    loader = _Loader(text, source)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        raise YamlInputError(f'{source} is not valid YAML: '
                             f'{" ".join(str(exc).split())}') from None
    finally:
        loader.dispose()


def read_yaml_file(path, source: str | None = None):
    """
    Return the data of a YAML file read at a bounded cost (:func:`load_yaml`).

    An OSError (missing, unreadable) propagates; a file over :data:`MAX_YAML_BYTES` is refused
    before it is read.
    """
    from pathlib import Path
    path = Path(path)
    source = str(path) if source is None else source
    with open(path, 'rb') as fh:
        data = fh.read(MAX_YAML_BYTES + 1)
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise YamlInputError(f'{source} is not a text file (not UTF-8: {exc.reason} at byte '
                             f'{exc.start}); YAML is text') from None
    return load_yaml(text, source)


__all__ = ['load_yaml', 'read_yaml_file', 'YamlInputError', 'MAX_YAML_BYTES',
           'MAX_EXPANDED_NODES', 'MAX_DEPTH']
