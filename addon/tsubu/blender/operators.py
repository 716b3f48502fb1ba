"""Operators: give an object a role, bake / resume / rebuild the surface / free, and presets.

Bake exports the scene (main thread, bpy), validates it, then runs
tsubu.bake in a background thread: the C solvers release the GIL, so the
interface stays live. Progress shows in the status bar; Esc cancels between
substeps and every frame written so far stays. In `blender -b` the same
operator runs to the end synchronously.
"""
import threading
import time

import bpy
from bpy.props import BoolProperty, StringProperty

from .. import presets, schema as schemas
from ..baking import bake
from ..cache import Cache
from ..errors import CancelledError
from ..estimate import estimate
from ..surface import SETTINGS as SURFACE_SETTINGS, rebuild_surface, surface_source
from . import export, freshness, playback, properties


def active_domain(context):
    obj = context.object
    s, role = properties.role_of(obj) if obj else (None, None)
    return obj if role is not None and role.holds_settings else None


def run_reported(op, action):
    """Run action() -> message; a ValueError or OSError becomes an ERROR report (CANCELLED),
    success an INFO report with the message (FINISHED)."""
    try:
        message = action()
    except (ValueError, OSError) as e:
        op.report({"ERROR"}, str(e))
        return {"CANCELLED"}
    op.report({"INFO"}, message)
    return {"FINISHED"}


def domain_settings(context):
    """(schema, {parameter: value}) of the active domain."""
    domain = active_domain(context)
    s, _ = properties.role_of(domain)
    return s, properties.read_group(getattr(domain.tsubu, properties.settings_attr(s.effect)), s.params)


class TSUBU_OT_role_set(bpy.types.Operator):
    """Give the active object a part in a Tsubu effect"""
    bl_idname = "tsubu.role_set"
    bl_label = "Set Tsubu Role"
    bl_options = {"REGISTER", "UNDO"}
    role_id: StringProperty(name="Role", description="effect.role, e.g. water.fluid")

    @classmethod
    def description(cls, context, properties):
        """Each item of Add Tsubu Role says what its role does (the schema's help)."""
        effect, _, role = properties.role_id.partition(".")
        try:
            r = schemas.get(effect).role(role)
        except ValueError:
            r = None
        return r.help if r is not None else cls.__doc__

    @classmethod
    def poll(cls, context):
        return context.object is not None

    def execute(self, context):
        effect, _, role = self.role_id.partition(".")
        try:
            s = schemas.get(effect)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        if s.role(role) is None:
            self.report({"ERROR"}, f"{s.label} has no role '{role}'")
            return {"CANCELLED"}
        context.object.tsubu.role_id = self.role_id
        return {"FINISHED"}


class TSUBU_OT_role_clear(bpy.types.Operator):
    """Take the active object out of its Tsubu effect"""
    bl_idname = "tsubu.role_clear"
    bl_label = "Remove Tsubu Role"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.tsubu.role_id != ""

    def execute(self, context):
        context.object.tsubu.role_id = ""
        return {"FINISHED"}


RUNNING = {}  # domain name -> the Job working on its cache (one at a time per domain)


class Job:
    """Work on a cache on a worker thread (the C code releases the GIL, so the interface stays live);
    the operator polls it. A bake, an estimate and a surface rebuild are Jobs."""
    verb = ""

    def __init__(self, folder, frame_start, frame_end):
        self.folder, self.frame_end = folder, frame_end
        self.cancel = threading.Event()
        self.fraction, self.frame, self.error, self.cancelled = 0.0, frame_start, None, False
        self.started = time.monotonic()
        self.thread = threading.Thread(target=self.run, name=f"tsubu-{type(self).__name__}", daemon=True)

    def run(self):
        try:
            self.work()
        except CancelledError:
            self.cancelled = True
        except Exception as e:  # reported by the operator on the main thread
            self.error = e

    def eta(self):
        """'about 3 min left' once a few % are done, from the pace so far."""
        elapsed = time.monotonic() - self.started
        if self.fraction < 0.02 or elapsed < 2.0:
            return "estimating time left"
        left = elapsed * (1.0 - self.fraction) / self.fraction
        return (f"about {left:.0f} s left" if left < 90 else f"about {left / 60:.0f} min left" if left < 5400
                else f"about {left / 3600:.1f} h left")


class BakeJob(Job):
    verb = "baking"

    def __init__(self, description, folder, resume):
        super().__init__(folder, description.frame_start, description.frame_end)
        self.description, self.resume = description, resume

    def progress(self, p):
        self.fraction, self.frame = p.fraction, p.frame
        return self.cancel.is_set()

    def work(self):
        bake(self.description, self.folder, progress=self.progress, resume=self.resume)


class SurfaceJob(Job):
    verb = "rebuilding the surface of"

    def __init__(self, folder, settings, frames):
        super().__init__(folder, frames[0], frames[-1])
        self.settings, self.frames = settings, []

    def progress(self, frame, done, total):
        self.frame, self.fraction = frame, done / total

    def work(self):
        self.frames = rebuild_surface(self.folder, self.settings, progress=self.progress,
                                      cancelled=self.cancel.is_set)


class EstimateJob(Job):
    verb = "estimating"

    def __init__(self, description):
        super().__init__("", description.frame_start, description.frame_start)
        self.description, self.result = description, None

    def progress(self, p):
        self.fraction = p.fraction
        return self.cancel.is_set()

    def work(self):
        self.result = estimate(self.description, progress=self.progress)


class JobOperator:
    """Start a Job: synchronously in `blender -b` and scripts (execute), else on a worker thread with
    the frame, percentage and time left in the status bar and Esc to cancel (invoke, modal)."""

    @classmethod
    def poll(cls, context):
        d = active_domain(context)
        return d is not None and d.name not in RUNNING

    def execute(self, context):
        domain, job = self.prepare(context)
        if job is None:
            return {"CANCELLED"}
        job.run()
        return self.finish(context, domain, job)

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        domain, job = self.prepare(context)
        if job is None:
            return {"CANCELLED"}
        self.domain_name, self.job = domain.name, job
        RUNNING[domain.name] = job
        job.thread.start()
        wm = context.window_manager
        self.timer = wm.event_timer_add(0.2, window=context.window)
        wm.progress_begin(0, 100)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def report_end(self, domain, job, failed, cancelled, done):
        """The domain's status and Blender's report for how the job ended; the operator's result."""
        if job.error is not None:
            domain.tsubu.status = f"Failed: {job.error}"
            self.report({"ERROR"}, f"Tsubu: {failed} {domain.name} failed: {job.error}")
            return {"CANCELLED"}
        if job.cancelled:
            domain.tsubu.status = cancelled
            self.report({"WARNING"}, cancelled)
            return {"CANCELLED"}
        domain.tsubu.status = done
        self.report({"INFO"}, f"Tsubu: {domain.name}: {done}")
        return {"FINISHED"}

    def modal(self, context, event):
        job = self.job
        if event.type == "ESC" and event.value == "PRESS":
            job.cancel.set()
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        if job.thread.is_alive():
            state = "cancelling" if job.cancel.is_set() else job.verb
            context.workspace.status_text_set(
                f"Tsubu: {state} {self.domain_name}, frame {job.frame} of {job.frame_end} "
                f"({100 * job.fraction:.0f}%, {job.eta()})   Esc: cancel")
            context.window_manager.progress_update(int(100 * job.fraction))
            return {"RUNNING_MODAL"}
        context.window_manager.event_timer_remove(self.timer)
        context.window_manager.progress_end()
        context.workspace.status_text_set(None)
        RUNNING.pop(self.domain_name, None)
        domain = bpy.data.objects.get(self.domain_name)
        return self.finish(context, domain, job) if domain else {"CANCELLED"}


class TSUBU_OT_bake(JobOperator, bpy.types.Operator):
    """Bake the effect of the active domain into its cache folder (Esc cancels; frames already written stay)"""
    bl_idname = "tsubu.bake"
    bl_label = "Bake"
    resume: BoolProperty(name="Resume", default=False, description="Continue from the last checkpoint (the state is saved about every 30 s of baking)")

    def prepare(self, context):
        domain = active_domain(context)
        try:
            description = export.describe(context, domain).validate()
        except ValueError as e:
            domain.tsubu.status = "Not baked: see the error"
            self.report({"ERROR"}, str(e))
            return None, None
        return domain, BakeJob(description, export.cache_folder(domain), self.resume)

    def finish(self, context, domain, job):
        last = None
        if Cache(job.folder).exists():
            try:
                last = Cache(job.folder).last_whole_frame()
                playback.build_results(context.scene, domain)
                freshness.mark_baked(context.scene, domain)
            except (ValueError, OSError) as e:
                job.error = job.error or e
        return self.report_end(domain, job, "baking", f"Cancelled: frames up to {last} kept (Resume goes on)",
                               f"Baked frames {job.description.frame_start}-{job.description.frame_end}")


class TSUBU_OT_estimate(JobOperator, bpy.types.Operator):
    """Measure what the bake will take - particles or elements, memory, disk per frame and in all - by
    baking the first frame into a temporary folder (the cache is not touched)"""
    bl_idname = "tsubu.estimate"
    bl_label = "Estimate"

    def prepare(self, context):
        domain = active_domain(context)
        try:
            description = export.describe(context, domain).validate()
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return None, None
        return domain, EstimateJob(description)

    def finish(self, context, domain, job):
        if job.error is not None:
            self.report({"ERROR"}, f"Tsubu: estimating {domain.name} failed: {job.error}")
            return {"CANCELLED"}
        if job.cancelled:
            return {"CANCELLED"}
        domain.tsubu.estimate = job.result.summary()
        self.report({"INFO"}, f"Tsubu: {domain.name}: {domain.tsubu.estimate}")
        return {"FINISHED"}


class TSUBU_OT_rebuild_surface(JobOperator, bpy.types.Operator):
    """Make the liquid surface again from the cached particles with the domain's current surface
    settings, without simulating again (Esc cancels; each frame is written whole)"""
    bl_idname = "tsubu.rebuild_surface"
    bl_label = "Rebuild Surface"

    @classmethod
    def poll(cls, context):
        d = active_domain(context)
        if d is None or d.name in RUNNING:
            return False
        cache = Cache(export.cache_folder(d))
        try:
            return cache.exists() and surface_source(cache.manifest()) is not None
        except (ValueError, OSError):
            return False

    def prepare(self, context):
        domain = active_domain(context)
        s, values = domain_settings(context)
        settings = {name: values[name] for name in SURFACE_SETTINGS}
        folder = export.cache_folder(domain)
        try:
            cache = Cache(folder)
            frames = cache.frames(surface_source(cache.manifest()))
            if not frames:
                raise ValueError(f"{folder}: no cached particles to make a surface from; bake first")
        except (ValueError, OSError) as e:
            self.report({"ERROR"}, str(e))
            return None, None
        return domain, SurfaceJob(folder, settings, frames)

    def finish(self, context, domain, job):
        if job.frames or job.cancelled:
            playback.reload_surface(context.scene, domain)
        return self.report_end(domain, job, "rebuilding the surface of",
                               f"Surface rebuilt up to frame {job.frame} (cancelled; later frames keep the old one)",
                               f"Surface rebuilt for frames {job.frames[0]}-{job.frames[-1]}" if job.frames else "")


class TSUBU_OT_free(bpy.types.Operator):
    """Delete the active domain's cache (only the cache's own files) and its result objects"""
    bl_idname = "tsubu.free"
    bl_label = "Free Bake"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        d = active_domain(context)
        return d is not None and d.name not in RUNNING

    def execute(self, context):
        domain = active_domain(context)
        cache = Cache(export.cache_folder(domain))
        try:
            if cache.exists():
                cache.free()
        except (ValueError, OSError) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        playback.remove_results(domain)
        freshness.forget(domain)
        domain.tsubu.status = ""
        return {"FINISHED"}


class TSUBU_OT_preset_apply(bpy.types.Operator):
    """Apply a preset to the active domain's settings"""
    bl_idname = "tsubu.preset_apply"
    bl_label = "Apply Preset"
    bl_options = {"REGISTER", "UNDO"}
    filepath: StringProperty(subtype="FILE_PATH")

    @classmethod
    def poll(cls, context):
        return active_domain(context) is not None

    def execute(self, context):
        domain = active_domain(context)
        s, _ = properties.role_of(domain)
        try:
            preset = presets.load(self.filepath)
        except (ValueError, OSError) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        if preset["effect"] != s.effect:
            self.report({"ERROR"}, f"{self.filepath} is a {preset['effect']} preset, not {s.effect}")
            return {"CANCELLED"}
        properties.write_group(getattr(domain.tsubu, properties.settings_attr(s.effect)), s.params,
                               preset["parameters"])
        self.report({"INFO"}, f"Applied preset {preset['name']}")
        return {"FINISHED"}


class TSUBU_OT_preset_save(bpy.types.Operator):
    """Save the active domain's settings as a preset in your preset folder"""
    bl_idname = "tsubu.preset_save"
    bl_label = "Save Preset"
    name: StringProperty(name="Name", default="My Preset")
    description: StringProperty(name="Description", default="")

    @classmethod
    def poll(cls, context):
        return active_domain(context) is not None

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self)

    def execute(self, context):
        s, values = domain_settings(context)
        return run_reported(self, lambda: "Saved preset to " +
                            presets.save_user(s.effect, self.name, values, self.description))


class TSUBU_OT_preset_import(bpy.types.Operator):
    """Check a preset file (every problem listed) and add it to your preset folder"""
    bl_idname = "tsubu.preset_import"
    bl_label = "Import Preset"
    filepath: StringProperty(subtype="FILE_PATH")
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        def import_preset():
            p = presets.load(self.filepath)
            path = presets.save_user(p["effect"], p["name"], p["parameters"], p["description"])
            return f"Imported preset {p['name']} to {path}"

        return run_reported(self, import_preset)


class TSUBU_OT_preset_export(bpy.types.Operator):
    """Write the active domain's settings to a preset file to share"""
    bl_idname = "tsubu.preset_export"
    bl_label = "Export Preset"
    filepath: StringProperty(subtype="FILE_PATH")
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})
    name: StringProperty(name="Name", default="My Preset")

    @classmethod
    def poll(cls, context):
        return active_domain(context) is not None

    def invoke(self, context, event):
        self.filepath = presets.slug(self.name) + ".json"
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        s, values = domain_settings(context)
        path = bpy.path.ensure_ext(self.filepath, ".json")
        return run_reported(self, lambda: "Exported preset to " + presets.save(path, s.effect, self.name, values))


class TSUBU_OT_scene_export(bpy.types.Operator):
    """Write the active domain's scene - settings, objects, their meshes, motion and images - as a scene
    description (SCENE.json + SCENE.npz) that `python3 -m tsubu bake` and scripts bake without Blender"""
    bl_idname = "tsubu.scene_export"
    bl_label = "Export Scene"
    filepath: StringProperty(subtype="FILE_PATH")
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        return active_domain(context) is not None

    def invoke(self, context, event):
        self.filepath = bpy.path.clean_name(active_domain(context).name) + "_scene.json"
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        path = bpy.path.abspath(bpy.path.ensure_ext(self.filepath, ".json"))
        description = export.describe(context, active_domain(context))
        return run_reported(self, lambda: "Exported scene to " + description.validate().save(path))


CLASSES = (TSUBU_OT_role_set, TSUBU_OT_role_clear, TSUBU_OT_bake, TSUBU_OT_estimate, TSUBU_OT_rebuild_surface,
           TSUBU_OT_free, TSUBU_OT_preset_apply, TSUBU_OT_preset_save, TSUBU_OT_preset_import, TSUBU_OT_preset_export,
           TSUBU_OT_scene_export)


def cancel_all():
    """Ask running bakes to stop and wait for them (add-on disabled, Blender quitting)."""
    for job in list(RUNNING.values()):
        job.cancel.set()
        job.thread.join(timeout=30)
    RUNNING.clear()


