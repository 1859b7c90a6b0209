#!/bin/bash
# Run from the working directory after the agent finished; the reward goes where Harbor reads it.
mkdir -p /logs/verifier
python3 /tests/test_outputs.py && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
