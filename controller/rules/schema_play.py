"""Profile settings read by the hand itself: betting, board irregularities, showdown and awards.

Each key is one interpretation a floor person makes during a hand; the profile TOMLs give its value
and the rule it comes from. `controller.rules.profile` gathers this SCHEMA with the table schema.
"""

from controller.rules.profile import Spec

SCHEMA = {
    "betting": {
        "blinds_posted": Spec(str, ("all_in_for_less",), doc="a short stack posts what it has and is all in"),
        "ante_first": Spec(
            bool, doc="antes are taken before blinds (matters when a stack cannot cover both)"
        ),
        "heads_up_order": Spec(
            str,
            ("button_first_preflop",),
            doc="heads-up: the button posts SB, acts first pre-flop, last after",
        ),
        "preflop_first": Spec(str, ("left_of_big_blind",), doc="who opens the pre-flop betting"),
        "postflop_first": Spec(str, ("left_of_button",), doc="who opens each betting round after the flop"),
        "min_bet": Spec(str, ("big_blind",), doc="the smallest opening bet"),
        "min_raise": Spec(
            str,
            ("largest_full", "last_full"),
            doc="a raise must add at least the largest (or the most recent) full bet or raise of the round",
        ),
        "under_raise": Spec(
            str,
            ("at_least_half", "more_than_half"),
            doc="a raise short of the minimum: from this share of a full raise on it becomes exactly a "
            "minimum raise, below it a call",
        ),
        "under_min_bet": Spec(str, ("corrected",), doc="an opening bet under the minimum is raised to it"),
        "undercall": Spec(str, ("full_call",), doc="less than the call amount (not all in) is a full call"),
        "oversized_chip": Spec(str, ("call",), doc="a single oversized chip facing a bet, no declaration"),
        "oversized_chip_opening": Spec(str, ("chip_value",), doc="post-flop opening bet with one chip"),
        "oversized_chip_declared_raise": Spec(
            str, ("largest_up_to_chip",), doc="'raise' declared, one chip, no amount"
        ),
        "multi_chip": Spec(
            str,
            ("every_chip_needed", "less_than_double"),
            doc="silent multiple chips facing a bet are a call when every chip is needed to call "
            "(Dragon's Den also requires the chips to add to less than double the bet faced)",
        ),
        "call_facing_no_bet": Spec(str, ("check",)),
        "raise_facing_no_bet": Spec(str, ("min_bet",), doc="at least a minimum bet"),
        "check_facing_bet": Spec(str, ("call_or_fold",), doc="the player may then only call or fold"),
        "reopen": Spec(
            str,
            ("full_raise_only", "consecutive_short_allins", "half_bet_is_full"),
            doc="when a short all-in re-opens the betting for players who already acted",
        ),
        "out_of_turn": Spec(
            str,
            ("binding_unless_changed", "first_offence_free", "lose_chips"),
            doc="what an out-of-turn action binds",
        ),
        "out_of_turn_fold": Spec(str, ("binding",), doc="a fold out of turn stands"),
        "uncalled_bet": Spec(str, ("returned",)),
    },
    "board": {
        "premature_flop": Spec(str, ("reshuffle_keep_burn", "redeal_flop")),
        "premature_turn": Spec(str, ("reshuffle_keep_burn", "next_card_then_reshuffle")),
        "premature_river": Spec(str, ("reshuffle_keep_burn",)),
        "four_card_flop": Spec(str, ("scramble_pick_burn", "redeal_flop")),
        "missing_burn": Spec(str, ("card_stands",)),
    },
    "showdown": {
        "order": Spec(
            str,
            ("last_aggressor", "left_of_last_caller"),
            doc="who tables first when the final round had a bet",
        ),
        "order_no_bet": Spec(
            str,
            ("left_of_button", "small_blind", "earliest_position"),
            doc="who tables first when the final round was checked through",
        ),
        "all_in_face_up": Spec(bool, doc="with an all-in and betting over every hand is tabled: no order"),
        "cards_speak": Spec(bool),
        "show_both_to_win": Spec(bool, doc="a contested pot needs both hole cards tabled"),
        "side_pots": Spec(str, ("split_separately",)),
        "odd_chips": Spec(
            str,
            ("first_left_of_button", "one_each_from_left_of_button"),
            doc="who gets chips a split cannot divide",
        ),
    },
}
