//! The Renderer's frame: demand from visibility, the manager's budget loop, the draw.

use std::time::Instant;

use super::{DrawUniforms, GpuMesh, TexturedPass};
use super::{FrameInput, Prefetch, Renderer};
use crate::demand::Camera;
use crate::manager::FrameStats;
use crate::manager::FrameTiming;
use crate::resolution::UpscaleConfig;
use crate::{Error, Result};

impl Renderer {
    /// Gives the manager every texture's wanted level and covered pixels from the instances in
    /// view (and in the guard band and the look-ahead, at lower weights), through the GPU
    /// feedback's verdicts ([`crate::feedback::FeedbackDemand`], what a game's own
    /// renderer uses too).
    fn visibility(&mut self, camera: &Camera, output: (u32, u32)) {
        // The guard band covers a slow turn all around; the look-ahead (where the camera will
        // look in a few frames if it keeps turning and moving as it did since the last frame)
        // covers a fast one on the side it turns to; the prediction asks for the levels the
        // camera will want when a read started now lands. See `DemandView`.
        let view = self.demand.begin_frame(
            &self.manager,
            self.pass.feedback(),
            (camera.view, camera.projection(aspect_of(output))),
            output,
            self.config.guard_band,
        );
        self.on_screen.clear();
        for inst in self.instances.iter() {
            let (Some(mesh), Some(mat)) = (
                self.meshes.get(inst.mesh.index, inst.mesh.generation),
                self.materials
                    .get(inst.material.index, inst.material.generation),
            ) else {
                continue;
            };
            let tex = mat.base_color;
            let axes = [
                inst.transform.x_axis.truncate().length(),
                inst.transform.y_axis.truncate().length(),
                inst.transform.z_axis.truncate().length(),
            ];
            let scale = axes[0].max(axes[1]).max(axes[2]);
            // The mesh's UV density is per unit of area: scaled, an area grows by the product
            // of its two axes, so the density by their geometric mean, taken for the two
            // largest (a flat panel's own); the largest alone made a panel scaled (10, 3, 1)
            // almost an octave too blurry. The bounding sphere grows by the largest.
            let area_scale = (axes[0] * axes[1])
                .max(axes[0] * axes[2])
                .max(axes[1] * axes[2])
                .sqrt();
            let center = inst.transform.transform_point3(mesh.center);
            let radius = mesh.radius * scale;
            let uv_per_unit = mesh.uv_density * mat.uv_scale / area_scale.max(1e-6);
            if let Some(id) = mat.virtual_texture {
                // Until its GPU feedback comes back (the first frames, a prefetch), a virtual
                // texture in view asks from the CPU for the level its nearest point wants over
                // all of it: the plan takes the coarse tiles first, everywhere.
                if let Some(vt) = self.vt.as_mut()
                    && !vt.has_feedback(id)
                    && let Some(side) = vt.info(id).map(|i| i.width.max(i.height) as f32)
                    && let Some(d) = view.sphere(center, radius, uv_per_unit, side)
                    && d.weight == 1.0
                {
                    let s = mat.uv_scale;
                    vt.add_demand(id, d.now_level, [0.0, 0.0], [s, s], d.pixels);
                }
                continue;
            }
            let cpu = self
                .manager
                .texture_side(tex)
                .and_then(|side| view.sphere(center, radius, uv_per_unit, side));
            let Some(cpu) = cpu else {
                continue;
            };
            if cpu.weight == 1.0 {
                self.on_screen
                    .push((tex.index(), cpu.now_level, cpu.pixels));
            }
            self.demand
                .add(&mut self.manager, self.pass.feedback(), tex, &cpu);
        }
    }

    /// Pixel-octaves of texture blur on screen: see [`FrameStats::blur_pixel_octaves`].
    fn blur_on_screen(&self) -> f32 {
        let plan = self.manager.plan_textures();
        let mut blur = 0.0;
        for &(t, level, pixels) in &self.on_screen {
            let Some(p) = plan.get(t as usize) else {
                continue;
            };
            let resident = f32::from(p.resident_level.min(p.level_count));
            if level.is_finite() {
                blur += (resident - level.max(0.0)).max(0.0) * pixels;
            }
        }
        blur
    }

    /// The instances that can be drawn (mesh and material alive, the material's bind group
    /// made), with their index in the uniform buffer.
    fn drawable(&self) -> impl Iterator<Item = (usize, &GpuMesh, &wgpu::BindGroup)> {
        self.instances.iter().enumerate().filter_map(|(i, inst)| {
            let mesh = self.meshes.get(inst.mesh.index, inst.mesh.generation)?;
            let mat = self
                .materials
                .get(inst.material.index, inst.material.generation)?;
            let (_, bg) = self
                .material_groups
                .get(mat.base_color.index() as usize)?
                .as_ref()?;
            Some((i, &mesh.gpu, bg))
        })
    }

    /// The instances whose material samples a virtual texture (mesh alive), with their index in
    /// the uniform buffer.
    fn drawable_virtual(&self) -> impl Iterator<Item = (usize, &GpuMesh)> {
        self.instances.iter().enumerate().filter_map(|(i, inst)| {
            let mesh = self.meshes.get(inst.mesh.index, inst.mesh.generation)?;
            let mat = self
                .materials
                .get(inst.material.index, inst.material.generation)?;
            mat.virtual_texture?;
            Some((i, &mesh.gpu))
        })
    }

    /// Makes a material bind group for every texture whose view changed since its group was
    /// made (the manager's view version), and for new textures. Allocates only then.
    fn refresh_material_groups(&mut self) {
        let ctx = self.manager.context();
        let streamer = self.manager.streamer();
        for inst in self.instances.iter() {
            let Some(mat) = self
                .materials
                .get(inst.material.index, inst.material.generation)
            else {
                continue;
            };
            let tex = mat.base_color;
            let Some((view, version)) = streamer.texture_view(tex) else {
                continue;
            };
            let i = tex.index() as usize;
            if self.material_groups.len() <= i {
                self.material_groups.resize_with(i + 1, || None);
            }
            if self.material_groups[i]
                .as_ref()
                .is_none_or(|(v, _)| *v != version)
            {
                let bg = self.pass.material_bind_group(ctx, "material", view);
                self.material_groups[i] = Some((version, bg));
            }
        }
    }

    /// Streams what `camera` sees at an `output` size before the first frame is drawn (a loading
    /// screen): runs the streaming half of frames, without drawing, until every level the view
    /// wants is resident, nothing more can come in (the budget is full, or reads failed), or
    /// `timeout` has passed. IO never blocks longer than a millisecond at a time. The render
    /// targets are made at the planned scale on the way.
    pub fn prefetch(
        &mut self,
        output: (u32, u32),
        camera: &Camera,
        timeout: std::time::Duration,
    ) -> Result<Prefetch> {
        let start = Instant::now();
        let mut result = Prefetch::default();
        if output.0 == 0 || output.1 == 0 {
            return Ok(result);
        }
        let mut quiet = 0u32;
        loop {
            self.visibility(camera, output);
            self.fit_tile_cache()?;
            self.manager.frame(output, FrameTiming::default())?;
            // The virtual textures' tiles too (from the CPU's demand: nothing is drawn yet).
            let mut tiles_pending = false;
            if let Some(vt) = self.vt.as_mut() {
                let ctx = self.manager.context();
                let u = vt.update(ctx.device(), ctx.queue(), 16)?;
                tiles_pending = u.pending > 0 || u.loaded > 0;
            }
            self.manager.end_frame();
            self.manager.context().ledger().take_window_peak();
            result.frames += 1;
            let st = *self.manager.streamer().frame_stats();
            result.uploaded_bytes += st.uploaded_bytes;
            let (have, want) = self.manager.wanted_bytes();
            result.resident_mip_bytes = have;
            result.wanted_mip_bytes = want;
            if have >= want && !tiles_pending {
                result.complete = true;
                break;
            }
            if start.elapsed() >= timeout {
                break;
            }
            let idle = st.uploaded_bytes == 0
                && st.pending == 0
                && !tiles_pending
                && self.manager.last_plan().transitions.is_empty();
            // Nothing in flight and nothing planned for a few rounds: the budget holds no more.
            quiet = if idle { quiet + 1 } else { 0 };
            if quiet >= 3 {
                break;
            }
            if st.uploaded_bytes == 0 {
                // Waiting for reads (or for staging the GPU still holds).
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        result.ms = start.elapsed().as_secs_f32() * 1e3;
        Ok(result)
    }

    /// Renders one frame into `target` (a view of mip 0 of a texture in
    /// [`crate::RendererConfig::output_format`]; its size is the output size) and submits it.
    ///
    /// A 0x0 target (a minimised window) draws nothing and returns at once.
    pub fn render(
        &mut self,
        target: &wgpu::TextureView,
        input: &FrameInput,
    ) -> Result<&FrameStats> {
        // A render that failed after planning (its error returned) left its frame open.
        self.manager.end_open_frame();
        let out_tex = target.texture();
        let output = (out_tex.width(), out_tex.height());
        let now = Instant::now();
        let cpu_ms = self
            .last_submit
            .map_or(0.0, |t| now.duration_since(t).as_secs_f32() * 1e3);
        if output.0 == 0 || output.1 == 0 {
            // The time until the next drawn frame is a pause, not a frame's CPU time.
            self.last_submit = None;
            self.stats.skipped = true;
            self.stats.frame = self.manager.skip_frame();
            return Ok(&self.stats);
        }
        let device = self.manager.context().device().clone();
        let gpu_ms = self.timer.as_mut().and_then(|t| t.poll(&device));
        // Feedback that has come back (never waited for: a non-blocking poll), room for every
        // texture slot.
        let _ = device.poll(wgpu::PollType::Poll);
        let slots = self.manager.plan_textures().len();
        let next = self.manager.frame_number() + 1;
        // Feedback that cannot make room for every slot records nothing this frame; the frame
        // goes on with the CPU estimate (a game with more textures than one storage binding
        // holds still renders).
        let room = self
            .pass
            .feedback_mut()
            .begin_frame(self.manager.context(), next, slots as u32);
        match room {
            Err(e) if !self.feedback_refused => {
                tracing::warn!(error = %e, slots, "GPU feedback off until it has room");
                self.feedback_refused = true;
            }
            Ok(()) => self.feedback_refused = false,
            Err(_) => {}
        }
        self.visibility(&input.camera, output);
        // The tile cache fitted to the budget before the plan counts it.
        self.fit_tile_cache()?;
        let plan = self.manager.frame(output, FrameTiming { gpu_ms, cpu_ms })?;
        self.refresh_material_groups();
        // The virtual textures' tiles: the feedback that has come back, their plan, the tiles
        // read since (their cache is fixed bytes to the plan above).
        if let Some(vt) = self.vt.as_mut() {
            let ctx = self.manager.context();
            vt.update(ctx.device(), ctx.queue(), 16)?;
        }
        let ctx = self.manager.context();

        // Draw.
        let aspect = output.0 as f32 / output.1 as f32;
        let view_proj = input.camera.projection(aspect) * input.camera.view;
        // The targets' real scale (at a tiny output, not the bucket's).
        let mip_bias = plan.mip_bias;
        let count = self.instances.len() as u64;
        let stride = TexturedPass::uniform_stride(ctx);
        if self.uniforms.as_ref().is_none_or(|u| u.2 < count) {
            let cap = count.max(16).next_power_of_two();
            self.uniforms = None;
            let (buf, bg) = self.pass.uniform_buffer(ctx, "instance uniforms", cap)?;
            self.uniforms = Some((buf, bg, cap));
        }
        self.uniform_scratch.clear();
        self.uniform_scratch
            .resize((stride * count.max(1)) as usize, 0);
        let feedback_on = self.pass.feedback().config().enabled;
        for (i, inst) in self.instances.iter().enumerate() {
            let mut u = DrawUniforms::new(view_proj, inst.transform, mip_bias, input.debug_mips);
            if input.debug_wanted {
                u = u.with_debug_wanted();
            }
            let mat = self
                .materials
                .get(inst.material.index, inst.material.generation);
            if let Some(mat) = mat {
                u = u.with_uv_scale(mat.uv_scale);
                if let Some(id) = mat.virtual_texture {
                    u = u.with_virtual_texture(id.index());
                }
            }
            if let Some(mat) = mat
                && let Some((w, h)) = self.manager.streamer().texture_size(mat.base_color)
            {
                u = u.with_full_size(w, h);
                if let Some(o) = self.manager.streamer().texture_orientation(mat.base_color) {
                    u = u.with_orientation(o);
                }
                if feedback_on {
                    let t = mat.base_color.index();
                    u = u.with_feedback(t, w, h);
                    self.demand.recorded(mat.base_color, plan.frame);
                }
            }
            let off = i * stride as usize;
            self.uniform_scratch[off..off + std::mem::size_of::<DrawUniforms>()]
                .copy_from_slice(bytemuck::bytes_of(&u));
        }
        let Some((ubuf, ubind, _)) = self.uniforms.as_ref() else {
            return Err(Error::Validation {
                context: "rendering".into(),
                message: "no uniform buffer".into(),
            });
        };
        ctx.queue()
            .write_buffer(ubuf.buffer(), 0, &self.uniform_scratch);
        let Some(targets) = self.manager.targets() else {
            return Err(Error::Validation {
                context: "rendering".into(),
                message: "no render targets".into(),
            });
        };
        let timed = self.timer.as_mut().is_some_and(|t| t.begin_frame());
        let mut enc = ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("mipflow frame"),
            });
        let mut drawn = 0u32;
        // The depth pre-pass's depth, for the feedback record (made again with the targets).
        if self
            .depth_group
            .as_ref()
            .is_none_or(|(g, _)| *g != targets.generation())
        {
            let g = self.pass.depth_group(ctx, targets.depth_view());
            self.depth_group = Some((targets.generation(), g));
        }
        let Some((_, depth_group)) = self.depth_group.as_ref() else {
            unreachable!("made above");
        };
        {
            // Depth pre-pass: the nearest surface of every pixel, so that the shaded pass runs
            // once per pixel and GPU feedback counts only what is seen (a fragment shader with
            // side effects runs before the depth test: without this, a texture behind a wall
            // drawn first would count).
            let mut rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("depth pre-pass"),
                color_attachments: &[],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: targets.depth_view(),
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: if timed {
                    self.timer.as_ref().and_then(|t| t.pass_writes(true, false))
                } else {
                    None
                },
                occlusion_query_set: None,
                multiview_mask: None,
            });
            for (i, mesh, _) in self.drawable() {
                self.pass
                    .draw_depth(&mut rp, ubind, (i as u64 * stride) as u32, mesh);
            }
            for (i, mesh) in self.drawable_virtual() {
                self.pass
                    .draw_depth(&mut rp, ubind, (i as u64 * stride) as u32, mesh);
            }
        }
        {
            let c = self.config.clear_color;
            let mut rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("scene"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: targets.hdr_view(),
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color {
                            r: c[0],
                            g: c[1],
                            b: c[2],
                            a: c[3],
                        }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                // Read-only: the pre-pass's depth, also read by the feedback record.
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: targets.depth_view(),
                    depth_ops: None,
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            for (i, mesh, bg) in self.drawable() {
                self.pass.draw_after_prepass(
                    &mut rp,
                    ubind,
                    (i as u64 * stride) as u32,
                    bg,
                    depth_group,
                    mesh,
                );
                drawn += 1;
            }
            if let Some(vt) = self.vt.as_ref() {
                for (i, mesh) in self.drawable_virtual() {
                    self.pass.draw_virtual(
                        &mut rp,
                        ubind,
                        (i as u64 * stride) as u32,
                        vt.bind_group(),
                        Some(depth_group),
                        mesh,
                    );
                    drawn += 1;
                }
            }
        }
        // The virtual textures' tile feedback, copied back the same way.
        if let Some(vt) = self.vt.as_mut() {
            vt.record_feedback(&mut enc);
        }
        // This frame's feedback into the readback ring (skipped, never waited for, when the
        // ring is full), the bins cleared for the next frame.
        self.pass
            .feedback_mut()
            .resolve(ctx, &mut enc, mip_bias.exp2())?;
        let settings = UpscaleConfig::default();
        let ts = if timed {
            self.timer.as_ref().and_then(|t| t.pass_writes(false, true))
        } else {
            None
        };
        self.upscale
            .record(ctx, &mut enc, targets, target, &settings, ts)?;
        if timed && let Some(t) = self.timer.as_mut() {
            t.end_frame(&mut enc);
        }
        ctx.queue().submit([enc.finish()]);
        self.pass.feedback_mut().after_submit();
        if let Some(vt) = self.vt.as_mut() {
            vt.submitted();
        }
        if self.config.stream.deterministic && self.pass.feedback().config().enabled {
            // Deterministic streaming (tests, CI reports) already waits for IO and the GPU:
            // the readback is waited for too, so the feedback in use is always the last
            // frame's, and the same run gives the same report. Never on the real-time path.
            let _ = self.manager.context().wait_idle();
        }
        if timed && let Some(t) = self.timer.as_mut() {
            t.after_submit();
        }
        self.manager.end_frame();
        self.last_submit = Some(Instant::now());

        let mut stats = self.manager.frame_stats(
            &plan,
            FrameTiming {
                gpu_ms: gpu_ms.or(self.timer.as_ref().and_then(|t| t.last_ms())),
                cpu_ms,
            },
        );
        stats.instances_drawn = drawn;
        stats.feedback = self.pass.feedback().stats();
        stats.blur_pixel_octaves = self.blur_on_screen();
        self.stats = stats;
        Ok(&self.stats)
    }
}

/// Width over height of an `output` size (1 for an empty one).
fn aspect_of(output: (u32, u32)) -> f32 {
    output.0.max(1) as f32 / output.1.max(1) as f32
}
