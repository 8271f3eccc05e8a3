"""Recall: what a summary left out of the context, found again in the stored history.

``history`` searches the summarized part of a slot; ``tool`` offers the model
``recall_history`` once messages are summarized; ``automatic`` adds the best matches
of the user's new message to the turn's request. ``SummaryConfig.recall`` turns them on.
"""
