"""The demo's hostile answers to the relu task, one file each (data, never imported as code: their
text is the candidate). Each must be rejected; the gate it is expected at is in `jobs/demo.py`."""
