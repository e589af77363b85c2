"""Runs of the engine: named scenarios, sweeps over grids and seeds, the step-by-step stepper."""
