"""Human review of the judge's verdicts: reviewers correct them on the page, and the judge learns.

corrections.py  a reviewer's correction: the value, its results-topic document, the store's table
queue.py        /review: the evaluations worth a person's look (doubted, disagreed, a random share)
fit.py          pass thresholds refitted on the corrections, applied where they beat the shipped ones
routes.py       the page's review routes: the queue, recording a correction, the fits
metrics.py      ragpulse_corrections_total, ragpulse_judge_human_agreement_ratio, ragpulse_judge_threshold
"""
