"""What the plugin keeps.

The stored state of each slot, the live session's runtime, and what a summary reports.
"""
