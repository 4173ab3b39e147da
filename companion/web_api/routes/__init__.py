"""The scorepad's blueprints: the page, reference data, turn tools, games and photos."""

from companion.web_api.routes import dice_sets, games, page, photos, reference, turn

BLUEPRINTS = (page.bp, reference.bp, turn.bp, games.bp, photos.bp, dice_sets.bp)
