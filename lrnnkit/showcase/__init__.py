"""The showcase: what ``make demo`` and ``make docs`` show of lrnnkit, built on the public API only.

* :mod:`.demo` -- :func:`~lrnnkit.showcase.demo.run_demo`, the end-to-end run behind ``lrnnkit demo``: compile and
  certify the default automata, worked traces, eigenvalues, the precision demos, the Triton layers; writes
  ``summary.json`` and, through :mod:`.report`, ``report.html``.
* :mod:`.report` -- :func:`~lrnnkit.showcase.report.write_report` renders a demo summary as self-contained HTML;
  :func:`~lrnnkit.showcase.report.figure` and :func:`~lrnnkit.showcase.report.eigenvalue_figure` draw the plots.
* :mod:`.docgen` -- :func:`~lrnnkit.showcase.docgen.generate` writes the documentation pages generated from the
  code (``lrnnkit docs docs/generated``, run by ``make docs``).
* :mod:`.steps` -- the step machinery both runs share: :func:`~lrnnkit.showcase.steps.time_limit`,
  :class:`~lrnnkit.showcase.steps.StepTimeout`, :func:`~lrnnkit.showcase.steps.one_line`.

Imports flow one way: ``docgen`` imports ``demo``, ``report`` and ``steps``; the command line (``lrnnkit docs``)
hands docgen its help texts, so the showcase imports nothing of the CLI; ``demo`` imports
``report`` and ``steps``; :mod:`.collapse` compiles the registry's models for the precision collapse table; the CLI
imports :mod:`.demo` for ``lrnnkit demo``; nothing else in lrnnkit imports the showcase.
"""
