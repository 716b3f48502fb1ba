"""Small drawing helpers shared by the panels; imports nothing of Tsubu, so the message shown when
the compiled core is missing (unavailable.py) can use them too."""
import textwrap


def draw_message(layout, text, context, icon):
    """A message wrapped to the region's width, so that a long one (a file name) is read whole."""
    region = getattr(context, "region", None)
    width = region.width if region is not None else 400
    chars = max(24, int(width / (7 * context.preferences.system.ui_scale)) - 4)
    col = layout.column(align=True)
    for i, line in enumerate(textwrap.wrap(text, chars, break_long_words=True) or [""]):
        col.label(text=line, icon=icon if i == 0 else "BLANK1")
