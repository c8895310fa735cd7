# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What the SLIP hopping controller remembers from one hop to the next.

The touchdown and apex records, the hop counter, the per-hop corrections (apex integral, Bezier
profile scale) and the two per-hop observers of the hop model's errors (apex speed, displacement).
:class:`dodo_control.controller.Controller` writes them at its touchdown, liftoff and apex events;
``Controller.reset`` starts a new :class:`HopMemory`.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from .config import ControllerConfig


@dataclass
class HopMemory:
    """
    State kept across hops (units in the field comments).

    The observers' predictions (``v_pred``, ``hop_pred``) are made at an apex and used at the
    next one.
    """

    ground: float                   # ground height estimate (last foothold), m
    stance_time: float              # duration of the last stance, s
    hops: int = 0                   # touchdowns so far
    touchdown_t: float = 0.0        # time of the last touchdown, s
    foothold: object = None         # world x-z of the last foothold, m (None before the first)
    td_alpha: float = 0.0           # leg angle at the last touchdown, rad
    energy_td: float = 0.0          # CoG energy at the last touchdown, J
    impact_loss: float = 0.0        # predicted CoG energy lost at the last touchdown, J
    last_apex_t: float | None = None   # time of the last apex, s
    last_apex_h: float = math.nan   # base height above the ground at the last apex, m
    last_apex_vx: float = math.nan  # CoG horizontal velocity at the last apex, m/s
    apex_offset: float | None = None        # CoG minus base height at the last apex, m
    apex_offset_pred: float | None = None   # that offset predicted at the touchdown posture, m
    apex_correction: float = 0.0    # per-hop integral on the apex height error, m
    v_bias: float = 0.0             # learned bias of the return map's apex speed, m/s
    v_pred: float | None = None     # apex speed the return map predicted for the next apex, m/s
    hops_at_pred: int = 0           # ``hops`` when ``v_pred`` was made
    x_bias: float = 0.0             # learned displacement per hop the hop model misses, m
    hop_pred: tuple | None = None   # (hops, x, vx, fall, kick, stance time) at the last apex
    bezier_scale: float = 1.0       # Bezier profile scale kappa, (-)
    bezier_target: tuple = (0.0, 0.0)   # Bezier joint PD target [hip, knee], rad

    def update_velocity_bias(self, cfg: ControllerConfig, vx: float) -> None:
        """
        Learn the bias of the SLIP return map's apex-speed prediction per hop.

        The bias comes from model errors of the template, of the contact and of the touchdown
        timing; it is learnt from the prediction made at the previous apex. Hops with a residual
        beyond ``max_velocity_bias`` (a push, a misstep) are not used.
        """
        pred, self.v_pred = self.v_pred, None
        if pred is None or self.hops == self.hops_at_pred or not math.isfinite(pred):
            return
        residual = vx - pred
        if abs(residual) <= cfg.max_velocity_bias:
            step = cfg.velocity_bias_gain * (residual - self.v_bias)
            limit = cfg.max_velocity_bias_step
            self.v_bias += min(max(step, -limit), limit)

    def update_displacement_bias(self, cfg: ControllerConfig, x: float, vx: float, fall: float,
                                 kick: float) -> None:
        """
        Per hop: learn the horizontal displacement per hop the hop model misses.

        It is learnt from the prediction made at the previous apex, with the model behind v_ff:
        Δx = (v_n + v_n+1)/2 (2 t_fall + T_s) + kick T_s/2. Hops whose residual exceeds
        ``max_displacement_bias_m`` are not used; only consecutive apexes count.
        """
        pred, self.hop_pred = self.hop_pred, (self.hops, x, vx, fall, kick, self.stance_time)
        if pred is None or pred[0] + 1 != self.hops:
            return
        _, x0, v0, fall0, kick0, stance0 = pred
        residual = (x - x0) - (0.5 * (v0 + vx) * (2.0 * fall0 + stance0) + 0.5 * kick0 * stance0)
        if abs(residual) <= cfg.max_displacement_bias_m:
            self.x_bias += cfg.displacement_bias_gain * (residual - self.x_bias)
