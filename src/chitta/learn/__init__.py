"""The resonance learner (seed 001, "Self-Tuning"; issue 21 part 1): recall's weights tuned
by Thompson sampling from the feedback agents give. learner.py says how; params.py what is
tuned; posterior.py the formulas; context.py the query features it is conditioned on."""
