"""One path-traced photo of Phase 10 dice on a table, and its labels (docs/dataset_format.md).

Scene units: a die's edge is 1 (a real die's is about 16 mm). Every random choice comes from
the numpy generator passed in, so an image is remade exactly from its seed and index.
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass
from pathlib import Path

import bpy  # first: it makes Blender's other modules (bmesh, mathutils, bpy_extras) importable
import bmesh  # noqa: E402
import cv2
import numpy as np
from bpy_extras.object_utils import world_to_camera_view  # noqa: E402
from mathutils import Matrix, Vector  # noqa: E402

from companion.dice import Die, Face, standard_set
from training.synth.appearance import Appearance, sample_appearance
from training.synth.dice_render import numeral_ink
from training.synth.scene import share_in_frame

TEXTURE_PX = 128  # numeral texture per face
DECAL_LIFT = 0.002  # the numeral decal floats this far above its face, so it is never hidden
# each face's outward direction, and the two axes its texture's u and v run along
_DIRECTIONS = (
    ((0, 0, 1), (1, 0, 0), (0, 1, 0)),
    ((0, 0, -1), (-1, 0, 0), (0, 1, 0)),
    ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    ((-1, 0, 0), (0, -1, 0), (0, 0, 1)),
    ((0, 1, 0), (-1, 0, 0), (0, 0, 1)),
    ((0, -1, 0), (1, 0, 0), (0, 0, 1)),
)
TABLES = ("wood", "felt", "cloth", "stone", "plain")
# warm lamp to overcast sky, as (kelvin, linear rgb)
_KELVIN = ((2700, (1.0, 0.62, 0.33)), (4000, (1.0, 0.80, 0.62)), (5500, (1.0, 0.93, 0.87)),
           (6500, (1.0, 1.0, 1.0)), (8000, (0.86, 0.92, 1.0)))


@dataclass(frozen=True)
class Rendered:
    image: np.ndarray  # (h, w, 3) uint8 RGB
    dice: list[dict]
    conditions: dict


def linear(rgb) -> tuple[float, float, float]:
    """sRGB (0..1) to Blender's linear colours."""
    return tuple(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)


def kelvin_rgb(kelvin: float) -> tuple[float, float, float]:
    ks = [k for k, _ in _KELVIN]
    return tuple(float(np.interp(kelvin, ks, [rgb[i] for _, rgb in _KELVIN])) for i in range(3))


def _empty_scene(width: int, height: int, samples: int) -> bpy.types.Scene:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.use_adaptive_sampling = True
    scene.cycles.use_denoising = True
    scene.cycles.max_bounces = 4
    scene.render.threads_mode = "FIXED"
    scene.render.threads = 1  # the machine is shared with training
    scene.render.resolution_x, scene.render.resolution_y = width, height
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.world = bpy.data.worlds.new("world")
    scene.world.use_nodes = True
    return scene


def _material(name: str) -> tuple[bpy.types.Material, bpy.types.Node, bpy.types.NodeTree]:
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    tree = mat.node_tree
    return mat, tree.nodes["Principled BSDF"], tree


def _table_material(rng: np.random.Generator) -> tuple[bpy.types.Material, str]:
    kind = TABLES[int(rng.integers(len(TABLES)))]
    mat, bsdf, tree = _material("table")
    hue, sat, val = rng.uniform(0, 1), rng.uniform(0.1, 0.7), rng.uniform(0.15, 0.85)
    base = linear(_hsv(hue, sat, val))
    other = linear(_hsv((hue + rng.uniform(-0.08, 0.08)) % 1, sat * rng.uniform(0.6, 1.2), val * rng.uniform(0.4, 0.9)))
    bsdf.inputs["Roughness"].default_value = float(rng.uniform(0.25, 0.95))
    if kind == "plain":
        bsdf.inputs["Base Color"].default_value = (*base, 1)
        return mat, kind
    # the Mix node lists its sockets for every data type: 6 and 7 are the colours A and B, and
    # output 2 the mixed colour
    mix = tree.nodes.new("ShaderNodeMix")
    mix.data_type = "RGBA"
    mix.inputs[6].default_value = (*base, 1)
    mix.inputs[7].default_value = (*other, 1)
    coord = tree.nodes.new("ShaderNodeTexCoord")
    if kind == "wood":
        tex = tree.nodes.new("ShaderNodeTexWave")
        tex.inputs["Scale"].default_value = float(rng.uniform(0.05, 0.3))
        tex.inputs["Distortion"].default_value = float(rng.uniform(2, 12))
        tex.inputs["Detail"].default_value = 4.0
        mix.inputs[6].default_value = (*linear(_hsv(rng.uniform(0.04, 0.1), rng.uniform(0.4, 0.8), val)), 1)
    elif kind == "felt":
        tex = tree.nodes.new("ShaderNodeTexNoise")
        tex.inputs["Scale"].default_value = float(rng.uniform(5, 40))
        mix.inputs[7].default_value = (*[c * 0.8 for c in base], 1)
        bsdf.inputs["Roughness"].default_value = 1.0
    elif kind == "cloth":
        tex = tree.nodes.new("ShaderNodeTexChecker")
        tex.inputs["Scale"].default_value = float(rng.uniform(0.05, 0.6))
    else:
        tex = tree.nodes.new("ShaderNodeTexVoronoi")
        tex.inputs["Scale"].default_value = float(rng.uniform(0.2, 3))
    tree.links.new(coord.outputs["Object"], tex.inputs["Vector"])
    tree.links.new(tex.outputs[0] if kind != "stone" else tex.outputs["Distance"], mix.inputs[0])
    tree.links.new(mix.outputs[2], bsdf.inputs["Base Color"])
    return mat, kind


def _hsv(h: float, s: float, v: float) -> tuple[float, float, float]:
    return colorsys.hsv_to_rgb(h, float(np.clip(s, 0, 1)), float(np.clip(v, 0, 1)))


def _body_mesh(bevel: float) -> bpy.types.Mesh:
    mesh = bpy.data.meshes.new("die")
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    bmesh.ops.bevel(bm, geom=list(bm.edges) + list(bm.verts), offset=bevel, segments=3, profile=0.5,
                    affect="EDGES")
    bm.to_mesh(mesh)
    bm.free()
    for poly in mesh.polygons:
        poly.use_smooth = True
    return mesh


def _decal(name: str, direction: int, mask: np.ndarray, ink_rgb, roughness: float) -> bpy.types.Object:
    """A square over one face carrying its numeral: ink where the mask is, clear elsewhere."""
    normal, u, v = (Vector(a) for a in _DIRECTIONS[direction])
    centre = normal * (0.5 + DECAL_LIFT)
    corners = [centre + (su * u + sv * v) * 0.5 for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(c) for c in corners], [], [(0, 1, 2, 3)])
    uv = mesh.uv_layers.new()
    for loop, coord in zip(uv.data, ((0, 0), (1, 0), (1, 1), (0, 1))):
        loop.uv = coord
    image = bpy.data.images.new(name, TEXTURE_PX, TEXTURE_PX, alpha=False)
    image.colorspace_settings.name = "Non-Color"
    grey = np.flipud(mask).astype(np.float32)  # Blender's rows run bottom-up
    image.pixels.foreach_set(np.dstack([grey, grey, grey, np.ones_like(grey)]).ravel())
    mat, bsdf, tree = _material(name)
    tex = tree.nodes.new("ShaderNodeTexImage")
    tex.image = image
    tree.links.new(tex.outputs["Color"], bsdf.inputs["Alpha"])
    bsdf.inputs["Base Color"].default_value = (*linear(ink_rgb), 1)
    bsdf.inputs["Roughness"].default_value = roughness
    mesh.materials.append(mat)
    return bpy.data.objects.new(name, mesh)


def _place_dice(rng: np.random.Generator, count: int) -> list[tuple[float, float]]:
    """Centres on the table, never closer than two dice can be without overlapping."""
    spread = rng.uniform(1.2, 3.2) * math.sqrt(count)
    centres: list[tuple[float, float]] = []
    while len(centres) < count:
        for _ in range(200):
            p = rng.uniform(-spread, spread, 2)
            if all(math.dist(p, c) >= 1.5 for c in centres):
                centres.append((float(p[0]), float(p[1])))
                break
        else:
            spread *= 1.2
    return centres


def _add_die(scene, rng, app: Appearance, die: Die, body: bpy.types.Mesh, centre, top: int) -> bpy.types.Object:
    obj = bpy.data.objects.new(die.id, body)
    obj.location = (centre[0], centre[1], 0.5)
    obj.rotation_euler = (0.0, 0.0, float(rng.uniform(0, 2 * math.pi)))
    scene.collection.objects.link(obj)
    sides = [i for i in range(6) if i != top]
    order = [top] + [sides[i] for i in rng.permutation(5)]  # face index shown in each direction
    roughness = _roughness(app)
    for direction, face_index in enumerate(order):
        mask, ink = numeral_ink(app, die.faces[face_index], TEXTURE_PX)
        decal = _decal(f"{die.id}-{face_index}", direction, mask * app.ink_strength, ink, roughness)
        decal.parent = obj
        scene.collection.objects.link(decal)
    return obj


def _roughness(app: Appearance) -> float:
    """Body and ink share the plastic's finish: glossy dice have a low roughness."""
    return float(np.clip(0.65 - 0.55 * app.gloss, 0.08, 0.9))


def _lights(scene, rng: np.random.Generator) -> dict:
    kelvin = float(rng.uniform(2700, 8000))
    elevation = float(rng.uniform(25, 85))
    azimuth = float(rng.uniform(0, 360))
    sun = bpy.data.lights.new("sun", "SUN")
    sun.energy = float(rng.uniform(1.5, 5.0))
    sun.angle = math.radians(float(rng.uniform(0.5, 25)))
    sun.color = kelvin_rgb(kelvin)
    sun_obj = bpy.data.objects.new("sun", sun)
    sun_obj.rotation_euler = (math.radians(90 - elevation), 0.0, math.radians(azimuth))
    scene.collection.objects.link(sun_obj)
    ambient = float(rng.uniform(0.15, 0.9))
    sky = kelvin_rgb(float(rng.uniform(4000, 9000)))
    bg = scene.world.node_tree.nodes["Background"]
    bg.inputs["Color"].default_value = (*sky, 1)
    bg.inputs["Strength"].default_value = ambient
    lamp = bool(rng.random() < 0.5)
    if lamp:
        point = bpy.data.lights.new("lamp", "POINT")
        point.energy = float(rng.uniform(300, 3000))
        point.shadow_soft_size = float(rng.uniform(0.2, 3.0))
        point.color = kelvin_rgb(float(rng.uniform(2700, 5000)))
        obj = bpy.data.objects.new("lamp", point)
        obj.location = tuple(float(v) for v in (*rng.uniform(-10, 10, 2), rng.uniform(8, 25)))
        scene.collection.objects.link(obj)
    return {"kelvin": round(kelvin), "elevation_deg": round(elevation, 1), "ambient": round(ambient, 2),
            "lamp": lamp, "sun_angle_deg": round(math.degrees(sun.angle), 1)}


def _camera(scene, rng: np.random.Generator, centres, width: int, height: int) -> dict:
    lens = float(rng.uniform(22, 55))
    cam_data = bpy.data.cameras.new("camera")
    cam_data.sensor_fit = "HORIZONTAL"
    cam_data.sensor_width = 36.0
    cam_data.lens = lens
    cam = bpy.data.objects.new("camera", cam_data)
    scene.collection.objects.link(cam)
    scene.camera = cam
    f_px = lens / 36.0 * width
    pts = np.array(centres)
    target = Vector((*(pts.mean(axis=0) + rng.normal(0, 0.5, 2)), 0.5))
    reach = float(np.max(np.linalg.norm(pts - np.array(target[:2]), axis=1))) + 1.0
    # far enough for the dice to fit the shorter side (mostly), near enough for the face size wanted
    fit = reach * f_px / (0.45 * min(width, height)) * float(rng.uniform(0.75, 1.05))
    face_px = float(rng.uniform(28, 110)) * max(width, height) / 960  # sizes for a 960-px photo, scaled
    distance = max(f_px / face_px, fit)
    tilt = math.radians(float(rng.uniform(0, 40)))
    azimuth = float(rng.uniform(0, 2 * math.pi))
    offset = Vector((math.sin(tilt) * math.cos(azimuth), math.sin(tilt) * math.sin(azimuth), math.cos(tilt)))
    position = target + offset * distance
    look = (target - position).to_track_quat("-Z", "Y").to_matrix().to_4x4()
    roll = float(rng.uniform(0, 2 * math.pi))
    cam.matrix_world = Matrix.Translation(position) @ look @ Matrix.Rotation(roll, 4, "Z")
    return {"lens_mm": round(lens, 1), "tilt_deg": round(math.degrees(tilt), 1), "face_px": round(f_px / distance, 1)}


def _label(scene, cam, obj, die: Die, face: Face, width: int, height: int) -> dict:
    # the numeral's top-left, top-right, bottom-right, bottom-left (its texture's v runs along +y)
    corners = [obj.matrix_world @ Vector((x, y, 0.5)) for x, y in ((-0.5, 0.5), (0.5, 0.5), (0.5, -0.5), (-0.5, -0.5))]
    poly = []
    for c in corners:
        p = world_to_camera_view(scene, cam, c)
        poly.append([float(p.x * width), float((1.0 - p.y) * height)])
    xs, ys = [p[0] for p in poly], [p[1] for p in poly]
    box = [max(0.0, min(xs)), max(0.0, min(ys)), min(float(width), max(xs)), min(float(height), max(ys))]
    visible = share_in_frame(np.array(poly), width, height)
    # a top face hidden behind a nearer die is marked like one cut by the frame
    centre = obj.matrix_world @ Vector((0, 0, 0.5 + DECAL_LIFT * 2))
    origin = cam.matrix_world.translation
    hit, *_, hit_obj, _ = scene.ray_cast(bpy.context.evaluated_depsgraph_get(), origin, (centre - origin).normalized(),
                                         distance=(centre - origin).length - 0.01)
    hidden = bool(hit and hit_obj is not None and hit_obj != obj and hit_obj.parent != obj)
    return {
        "die": die.id, "value": "W" if face.is_wild else face.value, "color": face.color.value,
        "polygon": [[round(x, 1), round(y, 1)] for x, y in poly],
        "box": [round(v, 1) for v in box],
        "truncated": bool(visible < 0.999 or hidden),
        "visible": round(0.0 if hidden else min(1.0, visible), 3),
    }


def render_photo(rng: np.random.Generator, workdir: Path, samples: int = 8, long_side: int = 960,
                 split: str = "val") -> Rendered:
    portrait = bool(rng.random() < 0.3)
    short_side = long_side * 3 // 4
    width, height = (short_side, long_side) if portrait else (long_side, short_side)
    scene = _empty_scene(width, height, samples)
    app = sample_appearance(rng, split)
    table_mat, table = _table_material(rng)
    bpy.ops.mesh.primitive_plane_add(size=400)
    bpy.context.active_object.data.materials.append(table_mat)
    body_mat, bsdf, _ = _material("body")
    bsdf.inputs["Base Color"].default_value = (*linear(app.body_rgb), 1)
    bsdf.inputs["Roughness"].default_value = _roughness(app)
    body = _body_mesh(float(np.clip(app.bevel, 0.04, 0.16)))
    dice = standard_set().dice
    count = int(rng.integers(1, len(dice) + 1))
    chosen = [dice[i] for i in sorted(rng.choice(len(dice), count, replace=False))]
    tops = [int(rng.integers(6)) for _ in chosen]
    body.materials.append(body_mat)
    objects = [_add_die(scene, rng, app, die, body, c, t)
               for die, c, t in zip(chosen, _place_dice(rng, count), tops)]
    light = _lights(scene, rng)
    camera = _camera(scene, rng, [tuple(o.location[:2]) for o in objects], width, height)
    scene.view_settings.view_transform = "Standard" if rng.random() < 0.6 else "AgX"
    scene.view_settings.exposure = float(rng.uniform(-0.6, 0.6))
    bpy.context.view_layer.update()
    labels = [_label(scene, scene.camera, o, d, d.faces[t], width, height) for o, d, t in zip(objects, chosen, tops)]
    labels = [d for d in labels if d["box"][2] > d["box"][0] and d["box"][3] > d["box"][1]]
    out = workdir / "render.png"
    scene.render.filepath = str(out)
    bpy.ops.render.render(write_still=True)
    image = cv2.cvtColor(cv2.imread(str(out), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    noise = float(rng.uniform(0, 0.012))
    if noise > 0:
        image = np.clip(image + rng.normal(0, noise * 255, image.shape), 0, 255).astype(np.uint8)
    conditions = {"renderer": "blender-cycles", "split": split, **app.conditions(), "n_dice": count, "table": table,
                  "light": light, **camera, "samples": samples, "view_transform": scene.view_settings.view_transform,
                  "noise": round(noise, 4), "jpeg_quality": int(rng.integers(60, 96))}
    return Rendered(image, labels, conditions)
