"""Human feedback and the canary: users' ratings joined to the judge's verdicts, where feedback
comes from, and a golden set re-judged on a schedule."""
