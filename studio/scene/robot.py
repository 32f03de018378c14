"""An articulated humanoid robot (~1.33 m, Unitree-G1-like proportions) from CAD links.

Robot frame: +X forward, +Y to the robot's left, +Z up. The root is `pelvis`
(its origin at the pelvis centre, PELVIS_HEIGHT above the soles when every
joint is at 0: standing straight, arms hanging, feet flat). Every other body's
origin is at the joint that carries it, so a body frame *is* its joint frame.

Bodies (side suffix `_l` / `_r`, with an optional prefix for a second robot):
  pelvis, torso, head,
  shoulder_{s}, upper_arm_{s}, forearm_{s}, hand_{s},
  hip_{s}, thigh_{s}, shin_{s}, foot_{s}
Joints (all revolute; value in radians; 0 is the standing pose):
  waist          pelvis -> torso         axis +Z  [-2.6, 2.6]   (yaw)
  neck           torso -> head           axis +Z  [-1.2, 1.2]   (yaw)
  shoulder_pitch_{s}  torso -> shoulder_{s}       axis +Y  [-3.0, 2.6]
  shoulder_roll_{s}   shoulder_{s} -> upper_arm_{s}  axis +X  l [-0.3, 2.2]  r [-2.2, 0.3]
  elbow_{s}      upper_arm_{s} -> forearm_{s}  axis +Y  [-2.5, 0.0]
  wrist_{s}      forearm_{s} -> hand_{s}       axis +Z  [-1.9, 1.9]   (roll about the forearm)
  hip_pitch_{s}  pelvis -> hip_{s}             axis +Y  [-2.5, 1.5]
  hip_roll_{s}   hip_{s} -> thigh_{s}          axis +X  l [-0.5, 1.5]  r [-1.5, 0.5]
  knee_{s}       thigh_{s} -> shin_{s}         axis +Y  [0.0, 2.4]
  ankle_{s}      shin_{s} -> foot_{s}          axis +Y  [-0.87, 0.52]
Sign convention of the pitch joints (axis +Y): a positive angle swings the
limb below the joint backwards (-X). So raising an arm or a thigh forwards and
bending an elbow are negative; bending a knee is positive; a positive ankle
angle points the toes down. A positive roll on the left side moves the limb
outwards (+Y); on the right side outwards is negative.

Named frames:
  gripper_{s}  on hand_{s}, (0, 0, -GRIPPER_DEPTH): the palm centre; at rest the
               fingers point down (-Z) and the frame's axes match the robot's.
  sole_{s}     on foot_{s}, at the centre of the sole (ANKLE_HEIGHT below the
               ankle, SOLE_FORWARD ahead of it); z = 0 when standing on the floor.
  eyes         on head, the visor centre, looking +X.
Link lengths (joint to joint): shoulder->elbow UPPER_ARM, elbow->wrist
FOREARM, hip->knee THIGH, knee->ankle SHIN; shoulders at (0, ±SHOULDER_Y,
SHOULDER_Z) in the torso frame, hips at (0, ±HIP_Y, -HIP_DROP) in the pelvis frame.
"""
from __future__ import annotations

import math

from studio.scene.ir import Body, Geometry, Joint, Material, NamedFrame, Scene, Transform

WAIST_Z = 0.05          # torso origin above the pelvis origin
SHOULDER_Y, SHOULDER_Z = 0.20, 0.28
NECK_Z = 0.36
UPPER_ARM, FOREARM = 0.22, 0.20
GRIPPER_DEPTH = 0.06
HIP_Y, HIP_DROP = 0.09, 0.05
THIGH, SHIN = 0.30, 0.30
ANKLE_HEIGHT, SOLE_FORWARD = 0.07, 0.05
PELVIS_HEIGHT = HIP_DROP + THIGH + SHIN + ANKLE_HEIGHT      # 0.72 m
LINK_TOLERANCE = 1.5e-3
SIDES = ("l", "r")

MATERIALS = [Material("robot_shell", [0.82, 0.83, 0.85, 1.0], 0.35, 0.1),
             Material("robot_joint", [0.16, 0.17, 0.19, 1.0], 0.5, 0.6),
             Material("robot_visor", [0.05, 0.07, 0.1, 1.0], 0.15, 0.2)]


def _cad(part: str, offset=(0.0, 0.0, 0.0), **params) -> Geometry:
    return Geometry(source="cad", part=part, params=params, tolerance=LINK_TOLERANCE,
                    offset=Transform(list(offset), [1.0, 0.0, 0.0, 0.0]))


def _capsule_between(top: float, bottom: float, radius: float) -> Geometry:
    """A capsule along -Z from z=top down to z=bottom in its body frame."""
    return _cad("capsule", (0.0, 0.0, (top + bottom) / 2), length=round(top - bottom, 6), radius=radius)


def _link_geometry() -> dict[str, tuple[Geometry, str, float]]:
    """Body (without side) -> (geometry, material, mass kg)."""
    return {
        "pelvis": (_cad("rounded_box", size_x=0.14, size_y=0.22, size_z=0.10, radius=0.02), "robot_shell", 5.0),
        "torso": (_cad("rounded_box", (0.0, 0.0, 0.17), size_x=0.18, size_y=0.26, size_z=0.30, radius=0.03),
                  "robot_shell", 10.0),
        "head": (_cad("robot_head", (0.0, 0.0, 0.11), radius=0.09, visor=0.02), "robot_shell", 1.5),
        "shoulder": (_cad("sphere", radius=0.045), "robot_joint", 0.5),
        "upper_arm": (_capsule_between(-0.05, -UPPER_ARM, 0.035), "robot_shell", 1.0),
        "forearm": (_capsule_between(-0.02, -FOREARM, 0.03), "robot_shell", 0.8),
        "hand": (_cad("rounded_box", (0.0, 0.0, -0.055), size_x=0.06, size_y=0.035, size_z=0.09, radius=0.01),
                 "robot_joint", 0.4),
        "hip": (_cad("sphere", radius=0.045), "robot_joint", 0.5),
        "thigh": (_capsule_between(-0.07, -THIGH, 0.055), "robot_shell", 3.0),
        "shin": (_capsule_between(-0.02, -(SHIN - 0.02), 0.045), "robot_shell", 2.0),
        "foot": (_cad("rounded_box", (SOLE_FORWARD, 0.0, -ANKLE_HEIGHT + 0.0225),
                      size_x=0.22, size_y=0.09, size_z=0.045, radius=0.012), "robot_joint", 0.8),
    }


def _origin(x: float, y: float, z: float) -> Transform:
    return Transform([x, y, z], [1.0, 0.0, 0.0, 0.0])


def robot_parts(prefix: str = "", group: str = "robot") -> Scene:
    """The robot alone, as a Scene (bodies, joints, frames, materials); no rest, no cameras."""
    links = _link_geometry()
    s = Scene(name=f"{prefix}robot", materials=[Material(**m.__dict__) for m in MATERIALS])

    def body(name: str, link: str) -> None:
        geometry, material, mass = links[link]
        s.bodies.append(Body(prefix + name, "link", geometry, material, group, [], mass))

    def joint(name, parent, child, origin, axis, lower, upper) -> None:
        s.joints.append(Joint(prefix + name, "revolute", prefix + parent, prefix + child,
                              origin, list(axis), lower, upper))

    X, Y, Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
    for name in ("pelvis", "torso", "head"):
        body(name, name)
    joint("waist", "pelvis", "torso", _origin(0, 0, WAIST_Z), Z, -2.6, 2.6)
    joint("neck", "torso", "head", _origin(0, 0, NECK_Z), Z, -1.2, 1.2)
    s.frames.append(NamedFrame(prefix + "eyes", prefix + "head", _origin(0.073, 0.0, 0.11)))
    for side in SIDES:
        sign = 1.0 if side == "l" else -1.0
        out_lo, out_hi = (-0.3, 2.2) if side == "l" else (-2.2, 0.3)
        leg_lo, leg_hi = (-0.5, 1.5) if side == "l" else (-1.5, 0.5)
        for link in ("shoulder", "upper_arm", "forearm", "hand", "hip", "thigh", "shin", "foot"):
            body(f"{link}_{side}", link)
        joint(f"shoulder_pitch_{side}", "torso", f"shoulder_{side}", _origin(0, sign * SHOULDER_Y, SHOULDER_Z),
              Y, -3.0, 2.6)
        joint(f"shoulder_roll_{side}", f"shoulder_{side}", f"upper_arm_{side}", _origin(0, 0, 0), X, out_lo, out_hi)
        joint(f"elbow_{side}", f"upper_arm_{side}", f"forearm_{side}", _origin(0, 0, -UPPER_ARM), Y, -2.5, 0.0)
        joint(f"wrist_{side}", f"forearm_{side}", f"hand_{side}", _origin(0, 0, -FOREARM), Z, -1.9, 1.9)
        joint(f"hip_pitch_{side}", "pelvis", f"hip_{side}", _origin(0, sign * HIP_Y, -HIP_DROP), Y, -2.5, 1.5)
        joint(f"hip_roll_{side}", f"hip_{side}", f"thigh_{side}", _origin(0, 0, 0), X, leg_lo, leg_hi)
        joint(f"knee_{side}", f"thigh_{side}", f"shin_{side}", _origin(0, 0, -THIGH), Y, 0.0, 2.4)
        joint(f"ankle_{side}", f"shin_{side}", f"foot_{side}", _origin(0, 0, -SHIN), Y, -0.87, 0.52)
        s.frames.append(NamedFrame(prefix + f"gripper_{side}", prefix + f"hand_{side}",
                                   _origin(0, 0, -GRIPPER_DEPTH)))
        s.frames.append(NamedFrame(prefix + f"sole_{side}", prefix + f"foot_{side}",
                                   _origin(SOLE_FORWARD, 0, -ANKLE_HEIGHT)))
    return s


def add_robot(scene: Scene, x: float = 0.0, y: float = 0.0, yaw: float = 0.0,
              prefix: str = "", group: str = "robot") -> str:
    """Add the robot standing on z = 0 at (x, y) facing `yaw` (radians from +X); returns the root name."""
    r = robot_parts(prefix, group)
    have = {m.name for m in scene.materials}
    scene.materials.extend(m for m in r.materials if m.name not in have)
    scene.bodies.extend(r.bodies)
    scene.joints.extend(r.joints)
    scene.frames.extend(r.frames)
    root = prefix + "pelvis"
    scene.rest[root] = [x, y, PELVIS_HEIGHT, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
    return root
