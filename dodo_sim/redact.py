# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Secrets in URLs never reach a terminal, a log or a file: :func:`redact` hides them in any text.

A database URL carries its password (``postgresql+psycopg://user:PASSWORD@host/db``, or a
``?password=`` query parameter of libpq); ``dodo optimize`` prints its storage in the study line,
the optuna-dashboard hint, error messages and the results. Every place that shows a URL, or a
message that may contain one (a driver's error), passes it through :func:`redact`, the one rule:
the password of ``scheme://user:password@`` and the value of ``password=``, ``secret=``,
``token=`` and the like become ``***``.
"""
from __future__ import annotations

import re

#: What replaces a secret.
HIDDEN = '***'

# scheme://user:password@ as SQLAlchemy reads it (a password holds no '@')
_USERINFO = re.compile(r'(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*:)(?P<secret>[^@\s]*)@')
# key=value secrets of query strings and libpq keyword strings (a quoted value may hold spaces)
_KEYWORDS = re.compile(r'(?i)(?P<head>\b(?:password|passwd|pwd|sslpassword|secret|token|'
                       r'access_token|api_key|apikey)=)'
                       r'(?:(?P<quote>[\'"])(?:(?!(?P=quote)).)*(?P=quote)|[^&\s\'"]+)')


def redact(text: object) -> str:
    """Return ``text`` (anything printable) with every URL password and keyed secret hidden."""
    text = _USERINFO.sub(lambda m: m['head'] + (HIDDEN if m['secret'] else '') + '@',
                         str(text))
    return _KEYWORDS.sub(lambda m: m['head'] + (m['quote'] or '') + HIDDEN + (m['quote'] or ''),
                         text)


__all__ = ['redact', 'HIDDEN']
