"""The profile's one name: its settings switch, its kind class's `name`, its memory
events' `kind`."""

NAME = "profile"
