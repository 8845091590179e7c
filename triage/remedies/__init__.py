"""Remediation generators: from facts to the exact change, with its rollback."""
