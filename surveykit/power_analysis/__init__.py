"""Power of tests on randomized answers: how many respondents a study needs.

* :mod:`surveykit.power_analysis.analytic`: the power of one- and two-sample
  tests of a prevalence from the design's Fisher information, as R's
  ``rr::power.rr.test`` computes it, for every design; the sample size for a
  target power, the detectable prevalence at a given n, and what the privacy
  costs beside a direct question.
* :mod:`surveykit.power_analysis.simulated`: Monte Carlo power where no closed
  form exists (regressions, correlations, non-compliance), as RRreg's
  ``powerplot``, with the Monte Carlo error of every figure.

The modules load on use (the simulation pulls in the regression code):
``from surveykit.power_analysis.analytic import power``.
"""
