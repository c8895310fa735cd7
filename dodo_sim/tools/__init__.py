# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""Offline and command-line tools: the dodo CLI, dodo hop, bags, replay, plots, the demo."""
