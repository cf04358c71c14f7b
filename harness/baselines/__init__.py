"""Building blocks of the baseline systems in agent_templates/.

They live in the package (and so in the base image) so that every submission built `FROM harness-base` can
import them instead of carrying its own copy.
"""
