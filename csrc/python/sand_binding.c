/* sand_binding.c - the sand solver from Python:
 *
 *   sand_bake(settings, objects, cache_dir, frame_start, frame_end, fps, first_frame=frame_start,
 *             max_substeps=1000, progress=None, compression=1,
 *             checkpoint_seconds=30) -> stats
 *
 * settings: dict of the rows of ts_sand_param_table (others take their defaults); objects: list of dicts
 * (name, role 0 bed / 1 object, vertices (N,3) float32 world at frame_start,
 * triangles (M,3) int32, motion (F,7) float64 or None for keyframed objects,
 * density, velocity, angular_velocity, origin, rotation). When first_frame
 * is after frame_start the state is restored from DIR/state/checkpoint.tsck.
 * tsubu/effects/sand.py builds these from a scene description. */
#include "run_binding.h"

#include "core/sand.h"

static int read_object(PyObject *d, void *object, PyObject *keep)
{
    ts_sand_object *o = object;
    int role;
    if (tsubu_read_object_input(d, keep, &o->in) < 0 || tsubu_dict_int(d, "role", &role))
        return -1;
    o->role = (ts_sand_role)role;
    return 0;
}

const tsubu_solver_binding tsubu_sand_binding = {&ts_sand_ops, read_object};
