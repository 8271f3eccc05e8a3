"""When a summary is due and what it covers.

The trigger, the plan, the budget of the window, the pinned messages.
"""
