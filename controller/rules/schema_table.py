"""Profile settings read by the table engine: seating and button, the deal monitor, registration."""

from controller.rules.profile import Spec

SIT_OR_DEAL = ("sit_out", "deal_in")

SCHEMA = {
    "seating": {
        "dead_button": Spec(
            bool, doc="the button rule is the dead button: BB advances, SB and button follow"
        ),
        "first_button": Spec(
            str, ("seat_1", "right_of_dealer"), doc="the first hand's button without a `button` line"
        ),
        "moved_player_between_sb_and_button": Spec(str, SIT_OR_DEAL),
        "new_player_between_sb_and_button": Spec(str, SIT_OR_DEAL),
        "new_player_dead_position": Spec(
            str, SIT_OR_DEAL, doc="a never-dealt player on a dead button or dead SB"
        ),
        "heads_up_button_posts_sb": Spec(bool),
        "heads_up_no_double_bb": Spec(bool),
        "self_dealt": Spec(bool, doc="players deal in turn; the panel shows the dealer seat"),
        "blind_dodge": Spec(
            str,
            ("flag", "flag_broken_table", "not_seen"),
            doc="a player who changes seat at this table and so skips a blind he was due (`flag`), or a "
            "player moved from a broken table who sits down after the big blind passed his seat "
            "(`flag_broken_table`, controller/rules/dodge.py): a `blind_dodge` line for the director; "
            "or nothing",
        ),
    },
    "deal": {
        "exposed_misdeal_cards": Spec(
            int, (1, 2), doc="exposure of one of the first N cards off the deck is a misdeal"
        ),
        "button_card_exposed_misdeal": Spec(bool),
        "multiple_exposed_misdeal": Spec(bool),
        "single_exposed_procedure": Spec(str, ("replace",)),
        "first_card_wrong_seat_misdeal": Spec(bool),
        "ineligible_seat_misdeal": Spec(bool),
        "eligible_dealt_out_misdeal": Spec(bool),
        "button_two_consecutive_cards": Spec(bool, doc="the button may get two consecutive cards"),
        "wrong_card_count_misdeal": Spec(bool),
        "wrong_card_count_after_substantial": Spec(str, ("dead_hand",)),
        "button_final_card_late": Spec(
            bool,
            doc="the button may take his final card after the action began (even past substantial "
            "action) unless he acted first; then his hand is dead",
        ),
        "extra_card_to_first_player": Spec(
            str,
            ("burn", "misdeal"),
            doc="a surplus card to the first player after the deal: it becomes the burn (cool_mule:5.i), "
            "or it is a wrong card count and a misdeal (bar_league:Misdeals(f), corner_pocket:Dealing.H)",
        ),
        "too_many_extra_cards_misdeal": Spec(bool),
        "multiple_boxed_misdeal": Spec(bool),
        "boxed_before_substantial": Spec(str, ("replace", "discard")),
        "boxed_after_substantial": Spec(str, ("replace", "discard")),
        "button_misplaced_misdeal": Spec(bool),
        "fouled_deck": Spec(
            str,
            ("void_return_chips", "refuse_line"),
            doc="a card seen twice in one hand (board or tabled): the hand is void and every chip goes back, "
            "or the line is refused as an error",
        ),
        "redeal_exact_replay": Spec(bool),
        "substantial_action": Spec(
            str, ("one_aggressive_or_three_passive", "two_with_chips_or_three", "two_players_acted")
        ),
        "player_exposure": Spec(str, ("kill", "live")),
        "absent_hand_dead": Spec(
            bool, doc="an absent player is dealt in; the hand is dead once the deal is done"
        ),
        "absent_at_turn": Spec(
            str,
            ("dead", "live"),
            doc="a player away from his seat when the action reaches him: his hand is dead, or the "
            "table rules nothing (the deal's end decides, absent_hand_dead)",
        ),
    },
    "conduct": {
        "clock_expired": Spec(str, ("dead_hand",), doc="a player on the clock who does not act in time"),
        "clock_seconds": Spec(
            int, minimum=1, doc="from the call for a clock to the end of the countdown, when the hand is dead"
        ),
        "clock_countdown_seconds": Spec(int, minimum=1, doc="the spoken countdown at the end of the clock"),
        "clock_call_after": Spec(
            str,
            ("reasonable", "tenth_of_level"),
            doc="how long a player may think before a clock may be called: the floor's judgement, or a "
            "tenth of the level's length (the `level` line's `minutes`): `clock` lines carry it as "
            "`reasonable_seconds` (controller/rules/clock_call.py)",
        ),
        "time_penalty": Spec(str, ("away_dealt_in",), doc="a penalised player is dealt in, the hand dead"),
        "elimination_order": Spec(str, ("bigger_start_stack_higher",)),
        "penalty_round": Spec(
            str,
            ("players_at_table", "none"),
            doc="a `penalty` in rounds: one hand per player at the table per round, or no such penalty",
        ),
        "level_change": Spec(
            str,
            ("next_hand", "one_more_hand_if_between_hands", "before_first_card"),
            doc="when a `level` line takes effect: the next hand; one hand later if it comes between hands; "
            "or the current hand while no card is dealt",
        ),
    },
    "registration": {
        "minimum_age": Spec(int, minimum=0),
        "late_arrival_minutes": Spec(int, minimum=0, doc="0: no deadline; else minutes after the first deal"),
        "late_arrival_level": Spec(
            int,
            minimum=0,
            doc="0: none; else the level from which a late player's seat is gone (the `level` line's "
            "`number`, filled by the floor): a first tap-in at that level or later is refused",
        ),
        "random_seat_draw": Spec(bool),
        "wrong_seat": Spec(str, ("move_to_correct_seat",)),
    },
}
