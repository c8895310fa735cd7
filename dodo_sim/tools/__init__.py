"""Offline and command-line tools: the dodo CLI, dodo hop, bags, replay, plots, the demo."""
