"""Ulus (the Mongolian board game of gods, champions and monsters): exact tables for the parts
its rules fully determine: shagai odds, the Naadam horse race and single monster fights."""
